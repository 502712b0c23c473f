//! [`Host`]: one running host, start to stop. [`Host::start`] opens and migrates the
//! database, builds the runtime (model from the configuration or `KINDGI_MODEL…`), starts
//! and registers every pack and MCP server, resumes unfinished runs, binds and serves the
//! `/v1` router (tools, flows, runs) with `kindgi-serve`. [`Host::stop`] ends it in the
//! order that loses nothing: runs first (while their pack services still serve; a run in
//! flight is left to resume on the next start), then the listener's drain, then the pack
//! services, then the database.

use std::net::SocketAddr;

use kindgi_api::AppState;
use kindgi_runtime::Runtime;
use kindgi_serve::{CancellationToken, Drained};
use kindgi_store::Database;

use crate::config::HostConfig;
use crate::error::HostError;
use crate::packs::{self, RunningPack, say};
use crate::register::Registrar;
use crate::registry_mcp::{McpPolicy, RegistryMcp};
use crate::sources::PackServices;
use kindgi_store::values::ValuesStore;

/// A running host.
#[derive(Debug)]
pub struct Host {
    name: &'static str,
    rt: Runtime,
    state: AppState,
    db: Database,
    addr: SocketAddr,
    url: String,
    packs: Vec<RunningPack>,
    server: tokio::task::JoinHandle<Drained>,
    server_stop: CancellationToken,
    run_stop_grace: std::time::Duration,
    /// The schedule loop ([`kindgi_runtime::triggers::Schedules`]) and its stop.
    schedule_loop: tokio::task::JoinHandle<()>,
    schedule_stop: CancellationToken,
}

impl Host {
    /// Starts a host; `name` (`kindgi server`, `kindgi dev`) prefixes its messages on
    /// stderr. Serving has begun when this returns.
    pub async fn start(name: &'static str, config: HostConfig) -> Result<Host, HostError> {
        let db_err = |e: &dyn std::fmt::Display| HostError::Database {
            target: kindgi_store_target(&config.database),
            message: e.to_string(),
        };
        let db = Database::connect(&config.database)
            .await
            .map_err(|e| db_err(&e))?;
        db.migrate().await.map_err(|e| db_err(&e))?;
        // Bound first: a pausing call's link names where this host is reached.
        let listener = match bind(&config.listen).await {
            Ok(l) => l,
            Err(e) => {
                db.close().await;
                return Err(e);
            }
        };
        let addr = listener.local_addr().map_err(|source| HostError::Listen {
            addr: config.listen.clone(),
            source,
        })?;
        let runtime_config = kindgi_runtime::RuntimeConfig {
            public_url: public_url(addr),
            ..Default::default()
        };
        let model = match config.model.clone() {
            Some(m) => m,
            None => kindgi_runtime::model::from_env().map_err(|e| HostError::Model {
                message: e.to_string(),
            })?,
        };
        let mut state = AppState::new(db.clone())
            .read_only_registry(config.read_only_registry)
            .stream_limits(config.caps.streams)
            .with_export_signer(config.export_signer.clone());
        state.body_budget = kindgi_api::body_budget::BodyBudget::new(config.caps.body_budget_bytes);
        state.allow_stdio_mcp = config.allow_stdio_mcp;
        state.egress = config.egress.clone();
        let defs = state.definitions.clone();
        state.agent_exists = Some(std::sync::Arc::new(move |tenant, id, version| {
            let defs = defs.clone();
            Box::pin(async move {
                defs.get_agent(&tenant, &id, Some(&version))
                    .await
                    .map(|r| r.is_some_and(|r| !r.is_unregistered()))
                    .map_err(|e| e.to_string())
            })
        }));
        let mcp = RegistryMcp::new(McpPolicy {
            egress: config.egress.clone(),
            allow_stdio: config.allow_stdio_mcp,
        })
        .with_endpoints(kindgi_store::mcp_endpoints::McpEndpointStore::new(
            db.clone(),
        ));
        let services = PackServices::default().with_registry_mcp(mcp);
        // Registry http tools (a tenant's definitions) connect under the host's policy.
        let synthesizers = kindgi_tools::synth::SynthesizerRegistry::empty();
        synthesizers.register(
            "http",
            std::sync::Arc::new(
                kindgi_tools::http::HttpSynthesizer::new().with_egress(config.egress.clone()),
            ),
        );
        let registry: std::sync::Arc<dyn kindgi_tools::registry::ToolRegistry> =
            state.registry.clone();
        let mut builder = Runtime::over(db.ports_sealed(config.secrets_key.clone()));
        if !config.tenant_hitl.is_empty() {
            builder = builder.tenant_hitl_policy(std::sync::Arc::new(config.tenant_hitl.clone()));
        }
        let rt = builder
            .config(runtime_config)
            .model(model)
            .model_egress(config.egress.clone())
            .registry(registry)
            .synthesizers(synthesizers)
            .registry_tools(std::sync::Arc::new(services.clone()))
            .guardrail_checks(std::sync::Arc::new(services.clone()))
            .definition_source(std::sync::Arc::new(state.definitions.clone()))
            .call_values(call_values(&db, &config))
            .build();
        let registrar = Registrar::new(rt.clone(), state.clone(), services);

        let mut running = Vec::new();
        for source in &config.packs {
            match packs::start(name, source, &registrar, &config.supervisor).await {
                Ok(p) => running.push(p),
                Err(e) => {
                    stop_packs(running).await;
                    db.close().await;
                    return Err(e);
                }
            }
        }
        for server in &config.mcp {
            crate::mcp::start(name, server, &registrar).await;
        }
        // MCP endpoints registered through the API: their tools are synced again at each boot.
        match kindgi_api::routes::mcp::sync_all(&state).await {
            Ok(failed) => {
                for (endpoint, why) in failed {
                    say(
                        name,
                        &format!("warning: MCP endpoint {endpoint} did not sync: {why}"),
                    );
                }
            }
            Err(e) => say(name, &format!("warning: MCP endpoints not synced: {e}")),
        }
        match rt.recover().await {
            Ok(ids) if !ids.is_empty() => {
                say(name, &format!("resumed {} unfinished run(s)", ids.len()));
            }
            Ok(_) => {}
            Err(e) => say(name, &format!("could not resume unfinished runs: {e}")),
        }

        let values = kindgi_api::routes::values::ValuesConfig::new(
            config.served_env.clone(),
            config.secrets_key.clone(),
        );
        let mut state = state.with_runtime(rt.clone()).with_values(values);
        let (schedule_loop, schedule_stop) = start_schedules(name, &mut state);
        let app = kindgi_api::router(state.clone());
        let server_stop = CancellationToken::new();
        let server = tokio::spawn(kindgi_api::serve(
            listener,
            app,
            config.limits.clone(),
            server_stop.clone(),
        ));
        Ok(Host {
            name,
            rt,
            state,
            db,
            addr,
            url: format!("http://{addr}"),
            packs: running,
            server,
            server_stop,
            run_stop_grace: config.run_stop_grace,
            schedule_loop,
            schedule_stop,
        })
    }

    /// `http://ADDR:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn state(&self) -> &AppState {
        &self.state
    }

    pub fn runtime(&self) -> &Runtime {
        &self.rt
    }

    pub fn database(&self) -> &Database {
        &self.db
    }

    /// The packs started, in configuration order.
    pub fn packs(&self) -> &[RunningPack] {
        &self.packs
    }

    /// Stops the host (see the module doc for the order); what the listener's drain left.
    pub async fn stop(self) -> Drained {
        let (drained, db) = self.stop_keeping_database().await;
        db.close().await;
        drained
    }

    /// [`Host::stop`], but the database is left open for a last write (`kindgi dev` revokes
    /// its key); the caller closes it.
    pub async fn stop_keeping_database(self) -> (Drained, Database) {
        // No new fires once stopping: the ledger holds what is due for the next start.
        self.schedule_stop.cancel();
        if let Err(e) = self.schedule_loop.await {
            say(
                self.name,
                &format!("warning: the schedule loop ended badly: {e}"),
            );
        }
        let left = self.rt.shutdown(self.run_stop_grace).await;
        if !left.is_empty() {
            say(
                self.name,
                &format!(
                    "{} run(s) in flight left to resume on the next start",
                    left.len()
                ),
            );
        }
        self.server_stop.cancel();
        let drained = self.server.await.unwrap_or(Drained { dropped: 0 });
        stop_packs(self.packs).await;
        (drained, self.db)
    }
}

/// Starts the schedule loop over `state`'s schedules; sub-minute schedules (a 6-field
/// every-second cron) only under `kindgi dev`.
fn start_schedules(
    name: &str,
    state: &mut AppState,
) -> (tokio::task::JoinHandle<()>, CancellationToken) {
    state.schedules = state
        .schedules
        .clone()
        .allow_sub_minute(name == "kindgi dev");
    let stop = CancellationToken::new();
    (state.schedules.spawn_loop(stop.clone()), stop)
}

async fn stop_packs(packs: Vec<RunningPack>) {
    for p in packs {
        p.stop().await;
    }
}

async fn bind(addr: &str) -> Result<tokio::net::TcpListener, HostError> {
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| HostError::Listen {
            addr: addr.to_owned(),
            source,
        })
}

/// The database target for messages: a URL's password is never shown.
fn kindgi_store_target(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => match rest.rsplit_once('@') {
            Some((_, host)) => format!("{scheme}://…@{host}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// Where this host is reached from outside: `KINDGI_PUBLIC_URL` (e.g. behind a proxy), else
/// its listen address (`0.0.0.0` / `::` read as loopback).
fn public_url(addr: SocketAddr) -> String {
    public_url_from(std::env::var("KINDGI_PUBLIC_URL").ok(), addr)
}

fn public_url_from(configured: Option<String>, addr: SocketAddr) -> String {
    if let Some(url) = configured
        && !url.trim().is_empty()
    {
        return url.trim().trim_end_matches('/').to_owned();
    }
    let ip = match addr.ip() {
        ip if ip.is_unspecified() && ip.is_ipv4() => "127.0.0.1".to_owned(),
        ip if ip.is_unspecified() => "[::1]".to_owned(),
        std::net::IpAddr::V6(v6) => format!("[{v6}]"),
        ip => ip.to_string(),
    };
    format!("http://{ip}:{}", addr.port())
}

/// Tool calls' env values and secrets: the store's, with a pack folder's env files under
/// them when the host has one ([`crate::dotenv`]).
fn call_values(
    db: &kindgi_store::Database,
    config: &HostConfig,
) -> std::sync::Arc<dyn kindgi_runtime::CallValues> {
    let store: std::sync::Arc<dyn kindgi_runtime::CallValues> = std::sync::Arc::new(
        ValuesStore::with_key(db.clone(), config.secrets_key.clone())
            .serving(config.served_env.clone()),
    );
    match &config.secrets_dotenv {
        Some(source) => {
            std::sync::Arc::new(crate::dotenv::DotenvSecrets::new(store, source.clone()))
        }
        None => store,
    }
}

#[cfg(test)]
mod tests {
    use super::public_url_from;

    #[test]
    fn the_public_url_is_the_configured_one_else_the_listen_address() {
        let at = |a: &str| a.parse().unwrap();
        assert_eq!(
            public_url_from(Some("https://k.example.com/".into()), at("0.0.0.0:7070")),
            "https://k.example.com"
        );
        assert_eq!(
            public_url_from(None, at("0.0.0.0:7070")),
            "http://127.0.0.1:7070"
        );
        assert_eq!(
            public_url_from(Some(" ".into()), at("10.1.2.3:80")),
            "http://10.1.2.3:80"
        );
        assert_eq!(public_url_from(None, at("[::]:81")), "http://[::1]:81");
        assert_eq!(public_url_from(None, at("[::1]:82")), "http://[::1]:82");
    }
}
