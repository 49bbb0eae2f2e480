//! Orders configured models into a fallback chain for one round (pinned name, then AUTO passes).

use crate::endpoint::{ModelEndpoint, Strength};
use crate::health::{Health, HealthTracker};

/// The chain to try, best first. `models` is in configured priority order.
///
/// A `pinned` alias that exists goes first regardless of scope, strength or health. The rest follow
/// the AUTO passes: (1) not Down, strength ≥ `min_strength`, scope matches; (2) not Down, strength
/// ≥ `min_strength`; (3) any model not Down; (4) Down models, strongest first — so a round still
/// has something to try when everything looks down. A model without a strength counts as
/// `average`. Every model appears once.
pub fn resolve_chain(
    models: &[ModelEndpoint],
    pinned: Option<&str>,
    scope: Option<&str>,
    min_strength: Option<Strength>,
    health: &HealthTracker,
) -> Vec<ModelEndpoint> {
    let mut chosen: Vec<usize> = Vec::with_capacity(models.len());
    if let Some(name) = pinned {
        match models.iter().position(|m| m.name == name) {
            Some(i) => chosen.push(i),
            None => tracing::warn!(model = name, "pinned model is not configured; using AUTO"),
        }
    }
    let up: Vec<bool> = models.iter().map(|m| health.status(&m.name) != Health::Down).collect();
    let strong_enough =
        |m: &ModelEndpoint| min_strength.is_none_or(|s| m.effective_strength() >= s);
    let in_scope = |m: &ModelEndpoint| scope.is_none_or(|s| m.has_scope(s));

    let passes: [&dyn Fn(usize) -> bool; 3] = [
        &|i| up[i] && strong_enough(&models[i]) && in_scope(&models[i]),
        &|i| up[i] && strong_enough(&models[i]),
        &|i| up[i],
    ];
    for pass in passes {
        for i in 0..models.len() {
            if pass(i) && !chosen.contains(&i) {
                chosen.push(i);
            }
        }
    }
    let mut down: Vec<usize> = (0..models.len()).filter(|i| !chosen.contains(i)).collect();
    // Stable sort keeps configured priority among equally strong models.
    down.sort_by_key(|&i| std::cmp::Reverse(models[i].effective_strength()));
    if !down.is_empty() && chosen.is_empty() {
        tracing::warn!(model = %models[down[0]].name, "every model is down; trying the strongest");
    }
    chosen.extend(down);
    chosen.into_iter().map(|i| models[i].clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(name: &str, strength: Strength, scope: &[&str]) -> ModelEndpoint {
        let mut m = ModelEndpoint::new(name, "http://x/v1", name);
        m.strength = Some(strength);
        m.scope = scope.iter().map(|s| s.to_string()).collect();
        m
    }

    fn names(chain: &[ModelEndpoint]) -> Vec<&str> {
        chain.iter().map(|m| m.name.as_str()).collect()
    }

    fn models() -> Vec<ModelEndpoint> {
        vec![
            model("cheap", Strength::Low, &["basic"]),
            model("coder", Strength::High, &["coding"]),
            model("big", Strength::VeryHigh, &["reasoning"]),
            model("mid", Strength::Average, &["coding"]),
        ]
    }

    #[test]
    fn auto_passes_prefer_scope_then_strength_then_anything() {
        let h = HealthTracker::new();
        let chain = resolve_chain(&models(), None, Some("coding"), Some(Strength::High), &h);
        assert_eq!(names(&chain), vec!["coder", "big", "cheap", "mid"]);
        let chain = resolve_chain(&models(), None, None, None, &h);
        assert_eq!(names(&chain), vec!["cheap", "coder", "big", "mid"]);
    }

    #[test]
    fn pinned_goes_first_even_when_weak_or_down() {
        let h = HealthTracker::new();
        for _ in 0..5 {
            h.record_failure("cheap");
        }
        let chain =
            resolve_chain(&models(), Some("cheap"), Some("coding"), Some(Strength::High), &h);
        assert_eq!(names(&chain), vec!["cheap", "coder", "big", "mid"]);
        let chain = resolve_chain(&models(), Some("nope"), None, None, &h);
        assert_eq!(names(&chain)[0], "coder");
    }

    #[test]
    fn down_models_go_last_strongest_first() {
        let h = HealthTracker::new();
        for name in ["coder", "big"] {
            for _ in 0..5 {
                h.record_failure(name);
            }
        }
        let chain = resolve_chain(&models(), None, Some("coding"), Some(Strength::High), &h);
        assert_eq!(names(&chain), vec!["cheap", "mid", "big", "coder"]);
        // Degraded is not Down: it keeps its place.
        let h = HealthTracker::new();
        for _ in 0..3 {
            h.record_failure("coder");
        }
        let chain = resolve_chain(&models(), None, Some("coding"), Some(Strength::High), &h);
        assert_eq!(names(&chain)[0], "coder");
    }
}
