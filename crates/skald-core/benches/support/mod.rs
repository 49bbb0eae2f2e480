//! What the engine benchmarks (and the long-session seeder example) share: an engine wired to
//! the fake provider.

// Each bench is its own crate and uses only part of this.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use skald_core::config::{EnvOverrides, MemorySecrets};
use skald_core::engine::ChatOptions;
use skald_core::{Engine, EngineOptions};
use skald_testkit::FakeLlm;

pub struct Rig {
    pub dir: tempfile::TempDir,
    pub fake: FakeLlm,
    pub engine: Engine,
    /// The temp dir as working directory, every tool call approved.
    pub opts: ChatOptions,
}

/// `config` is the whole `config.yml`; the model is the env-defined client on the fake.
pub async fn rig(config: &str) -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("config.yml"), config).unwrap();
    let fake = FakeLlm::start().await.unwrap();
    let engine = engine_on(data, &fake).await;
    let opts = ChatOptions {
        workdir: Some(dir.path().to_path_buf()),
        approve_all: true,
        ..Default::default()
    };
    Rig { dir, fake, engine, opts }
}

/// An engine on `data` (its config.yml as found there) whose model is the env-defined client on
/// `fake`, with keys kept in memory.
pub async fn engine_on(data: PathBuf, fake: &FakeLlm) -> Engine {
    Engine::open(EngineOptions {
        data_dir: Some(data),
        env: Some(EnvOverrides {
            base_url: Some(fake.base_url()),
            model: Some("fake-model".into()),
            api_key: None,
        }),
        secrets: Some(Arc::new(MemorySecrets::default())),
        ..Default::default()
    })
    .await
    .unwrap()
}
