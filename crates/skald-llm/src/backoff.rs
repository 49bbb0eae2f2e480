//! Retry delays (jittered exponential, `Retry-After` aware) and the injectable sleeper.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use rand::Rng;

/// Waits out a backoff delay. Injected so tests can skip or record the waits.
pub trait Sleeper: Send + Sync {
    fn sleep(&self, delay: Duration) -> Pin<Box<dyn Future<Output = ()> + Send + 'static>>;
}

/// The real thing: `tokio::time::sleep`.
#[derive(Debug, Default, Clone, Copy)]
pub struct TokioSleeper;

impl Sleeper for TokioSleeper {
    fn sleep(&self, delay: Duration) -> Pin<Box<dyn Future<Output = ()> + Send + 'static>> {
        Box::pin(tokio::time::sleep(delay))
    }
}

/// Delay before retry number `retry` (0-based). A server's `Retry-After` wins, up to `cap`;
/// otherwise `base · 2^retry`, capped, with "equal jitter" (half fixed, half random) so parallel
/// sessions hitting the same rate limit spread out but still wait a meaningful minimum.
pub fn backoff_delay(
    retry: u32,
    base: Duration,
    cap: Duration,
    retry_after: Option<Duration>,
) -> Duration {
    if let Some(ra) = retry_after {
        return ra.min(cap);
    }
    let exp = base.saturating_mul(1u32.checked_shl(retry.min(30)).unwrap_or(u32::MAX)).min(cap);
    let half = exp / 2;
    let jitter_nanos = u64::try_from(half.as_nanos()).unwrap_or(u64::MAX);
    let jitter = if jitter_nanos == 0 {
        Duration::ZERO
    } else {
        Duration::from_nanos(rand::thread_rng().gen_range(0..=jitter_nanos))
    };
    half + jitter
}

/// `Retry-After` as seconds (the form rate limiters use). HTTP dates are not interpreted: the
/// jittered backoff applies instead.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    v.parse::<f64>().ok().filter(|s| s.is_finite() && *s >= 0.0).map(Duration::from_secs_f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponential_within_bounds_and_capped() {
        let base = Duration::from_secs(1);
        let cap = Duration::from_secs(30);
        for retry in 0..8 {
            let exp = (base * 2u32.pow(retry)).min(cap);
            let d = backoff_delay(retry, base, cap, None);
            assert!(
                d >= exp / 2 && d <= exp,
                "retry {retry}: {d:?} not in [{:?}, {exp:?}]",
                exp / 2
            );
        }
        assert!(backoff_delay(100, base, cap, None) <= cap);
    }

    #[test]
    fn retry_after_is_honoured_up_to_the_cap() {
        let cap = Duration::from_secs(30);
        let base = Duration::from_secs(1);
        assert_eq!(
            backoff_delay(0, base, cap, Some(Duration::from_secs(7))),
            Duration::from_secs(7)
        );
        assert_eq!(backoff_delay(0, base, cap, Some(Duration::from_secs(700))), cap);
        assert_eq!(parse_retry_after(" 5 "), Some(Duration::from_secs(5)));
        assert_eq!(parse_retry_after("1.5"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    }
}
