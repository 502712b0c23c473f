//! Secrets from a pack's env files (the official dev's `dotenv` secrets backend, which a
//! pack's `.kindgi/dev/runtime.env` names with `KINDGI_SECRETS_BACKEND=dotenv`).
//!
//! Which files: for env `local`, `.env`, then `.env.local`, then `.kindgi/secrets.env` (a
//! later file wins); for any other env `E`, `.env.E`. Paths are relative to the pack folder.
//! Names starting `KINDGI_` are the runtime's own configuration and never a pack secret.
//! `${NAME}` / `$NAME` in unquoted and double-quoted values expand from names defined
//! earlier (any file), then from the process environment (never a `KINDGI_` name).
//!
//! [`DotenvSecrets`] wraps the store's [`CallValues`]: a secret set through the API
//! (`kindgi secrets set`) wins; the files supply what it does not hold. Files are read at
//! each resolution (so an edit applies to the next call), off the async workers, each
//! within [`MAX_FILE_BYTES`].

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use kindgi_core::StorageError;
use kindgi_core::ports::CallValues;
use kindgi_spec::ToolManifest;
use kindgi_tools::context::SecretResolver;
use kindgi_tools::tool::BoxFuture;

/// The largest env file read (1 MiB); a larger one is refused with its path.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// The prefix of the runtime's own names.
const RUNTIME_PREFIX: &str = "KINDGI_";

/// The app's env files env `local` reads by default (`KINDGI_SECRETS_DOTENV_FILES`).
pub const DEFAULT_LOCAL_FILES: [&str; 2] = [".env", ".env.local"];

/// Where secrets are read from: a folder and, for env `local`, the app's files in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DotenvSource {
    /// `KINDGI_SECRETS_DOTENV_DIR` (the pack folder).
    pub dir: PathBuf,
    /// `KINDGI_SECRETS_DOTENV_FILES`, relative to `dir`, lowest precedence first; Kindgi's
    /// own `.kindgi/secrets.env` is read after them.
    pub local_files: Vec<String>,
}

impl DotenvSource {
    /// The pack folder with the default files.
    pub fn pack(dir: PathBuf) -> Self {
        Self {
            dir,
            local_files: DEFAULT_LOCAL_FILES.iter().map(|f| f.to_string()).collect(),
        }
    }
}

/// The files env `env_name` reads, lowest precedence first.
pub fn env_files(source: &DotenvSource, env_name: &str) -> Vec<PathBuf> {
    let pack_dir = &source.dir;
    if env_name == "local" {
        let mut files: Vec<PathBuf> = source
            .local_files
            .iter()
            .map(|f| pack_dir.join(f))
            .collect();
        files.push(pack_dir.join(".kindgi").join("secrets.env"));
        files
    } else {
        vec![pack_dir.join(format!(".env.{env_name}"))]
    }
}

/// A problem reading an env file.
#[derive(Debug, thiserror::Error)]
pub enum DotenvError {
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: larger than the {MAX_FILE_BYTES} byte limit of an env file")]
    TooLarge { path: PathBuf },
    #[error("{path} line {line}: {message}")]
    Syntax {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

/// The merged values of env `env_name`'s files (missing files are skipped). Blocking.
pub fn read_env(
    source: &DotenvSource,
    env_name: &str,
) -> Result<BTreeMap<String, String>, DotenvError> {
    let mut values = BTreeMap::new();
    for path in env_files(source, env_name) {
        let meta = match std::fs::metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(source) => return Err(DotenvError::Read { path, source }),
        };
        if meta.len() > MAX_FILE_BYTES {
            return Err(DotenvError::TooLarge { path });
        }
        let text = std::fs::read_to_string(&path).map_err(|source| DotenvError::Read {
            path: path.clone(),
            source,
        })?;
        parse_into(&text, &mut values, &|n| std::env::var(n).ok()).map_err(|(line, message)| {
            DotenvError::Syntax {
                path: path.clone(),
                line,
                message,
            }
        })?;
    }
    values.retain(|k, _| !k.starts_with(RUNTIME_PREFIX));
    Ok(values)
}

/// Parses dotenv `text` into `values` (later lines win). `outer` supplies expansions no
/// earlier line defines. `Err((line, message))`.
pub fn parse_into(
    text: &str,
    values: &mut BTreeMap<String, String>,
    outer: &dyn Fn(&str) -> Option<String>,
) -> Result<(), (usize, String)> {
    let mut lines = text.lines().enumerate();
    while let Some((i, raw)) = lines.next() {
        let line = raw.trim_start();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((name, rest)) = line.split_once('=') else {
            return Err((i + 1, "expected NAME=value".into()));
        };
        let name = name.trim();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-')
        {
            return Err((i + 1, format!("{name:?} is not a variable name")));
        }
        let rest = rest.trim_start();
        let value = match rest.chars().next() {
            Some('\'') => quoted(rest, '\'', i, &mut lines)?,
            Some('"') => {
                let body = quoted(rest, '"', i, &mut lines)?;
                expand(&unescape(&body), values, outer)
            }
            _ => {
                // An unquoted value ends at ` #` (a comment) and is trimmed.
                let v = match rest.find(" #") {
                    Some(at) => &rest[..at],
                    None => rest,
                };
                expand(v.trim(), values, outer)
            }
        };
        values.insert(name.to_owned(), value);
    }
    Ok(())
}

/// The body of a value quoted with `q`, which may run over several lines.
fn quoted<'a>(
    rest: &str,
    q: char,
    first: usize,
    lines: &mut impl Iterator<Item = (usize, &'a str)>,
) -> Result<String, (usize, String)> {
    let mut body = String::new();
    let mut current = rest[1..].to_owned();
    loop {
        if let Some(end) = closing(&current, q) {
            body.push_str(&current[..end]);
            return Ok(body);
        }
        body.push_str(&current);
        body.push('\n');
        match lines.next() {
            Some((_, next)) => current = next.to_owned(),
            None => return Err((first + 1, format!("the {q}-quoted value is not closed"))),
        }
    }
}

/// Where `q` closes in `s` (a `"` escaped with `\` does not).
fn closing(s: &str, q: char) -> Option<usize> {
    let mut escaped = false;
    for (at, c) in s.char_indices() {
        if q == '"' && c == '\\' && !escaped {
            escaped = true;
            continue;
        }
        if c == q && !escaped {
            return Some(at);
        }
        escaped = false;
    }
    None
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// `${NAME}` and `$NAME` from `values`, then `outer` (never a `KINDGI_` name); an unknown
/// name expands to nothing.
fn expand(
    s: &str,
    values: &BTreeMap<String, String>,
    outer: &dyn Fn(&str) -> Option<String>,
) -> String {
    let lookup = |name: &str| -> String {
        if let Some(v) = values.get(name) {
            return v.clone();
        }
        if name.starts_with(RUNTIME_PREFIX) {
            return String::new();
        }
        outer(name).unwrap_or_default()
    };
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(braced) = after.strip_prefix('{')
            && let Some(end) = braced.find('}')
        {
            out.push_str(&lookup(&braced[..end]));
            rest = &braced[end + 1..];
            continue;
        }
        let len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        if len == 0 {
            out.push('$');
        } else {
            out.push_str(&lookup(&after[..len]));
        }
        rest = &after[len..];
    }
    out.push_str(rest);
    out
}

/// The store's call values, with a pack folder's env files under them for secrets.
#[derive(Debug)]
pub struct DotenvSecrets {
    inner: Arc<dyn CallValues>,
    source: Arc<DotenvSource>,
}

impl DotenvSecrets {
    pub fn new(inner: Arc<dyn CallValues>, source: DotenvSource) -> Self {
        Self {
            inner,
            source: Arc::new(source),
        }
    }
}

/// The env files' values for `env_name`, read off the async workers.
async fn read_off_thread(
    source: &Arc<DotenvSource>,
    env_name: &str,
) -> Result<BTreeMap<String, String>, DotenvError> {
    let from = source.clone();
    let env = env_name.to_owned();
    match tokio::task::spawn_blocking(move || read_env(&from, &env)).await {
        Ok(read) => read,
        Err(e) => Err(DotenvError::Read {
            path: source.dir.clone(),
            source: std::io::Error::other(e.to_string()),
        }),
    }
}

#[async_trait]
impl CallValues for DotenvSecrets {
    async fn env(
        &self,
        tenant: &str,
        project: Option<&str>,
        tool: &ToolManifest,
        names: &[String],
    ) -> Result<BTreeMap<String, String>, StorageError> {
        self.inner.env(tenant, project, tool, names).await
    }

    fn secrets(
        &self,
        tenant: &str,
        project: Option<&str>,
        tool: &ToolManifest,
    ) -> Option<Arc<dyn SecretResolver>> {
        Some(Arc::new(FileSecrets {
            inner: self.inner.secrets(tenant, project, tool),
            source: self.source.clone(),
        }))
    }

    async fn secret_values(
        &self,
        tenant: &str,
        project: Option<&str>,
        tool: &ToolManifest,
        names: &[String],
    ) -> Result<BTreeMap<String, String>, StorageError> {
        let mut found = self
            .inner
            .secret_values(tenant, project, tool, names)
            .await?;
        if found.len() < names.len() {
            let files = read_off_thread(&self.source, self.inner.served_env())
                .await
                .map_err(StorageError::backend_of("dotenv.read"))?;
            for name in names {
                if !found.contains_key(name)
                    && let Some(v) = files.get(name)
                {
                    found.insert(name.clone(), v.clone());
                }
            }
        }
        Ok(found)
    }

    fn served_env(&self) -> &str {
        self.inner.served_env()
    }
}

/// One tool call's secrets: the store's resolver, then the env files.
#[derive(Debug)]
struct FileSecrets {
    inner: Option<Arc<dyn SecretResolver>>,
    source: Arc<DotenvSource>,
}

impl SecretResolver for FileSecrets {
    fn resolve<'a>(
        &'a self,
        env_name: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let stored = match &self.inner {
                Some(r) => r.resolve(env_name, name).await,
                None => Err(String::new()),
            };
            if stored.is_ok() {
                return stored;
            }
            let files = read_off_thread(&self.source, env_name)
                .await
                .map_err(|e| e.to_string())?;
            if name.starts_with(RUNTIME_PREFIX) {
                return Err(format!(
                    "secret \"{name}\" is a runtime setting (KINDGI_*), never a pack secret"
                ));
            }
            files.get(name).cloned().ok_or_else(|| {
                let shown: Vec<String> = env_files(&self.source, env_name)
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect();
                format!(
                    "secret \"{name}\" is not set in env \"{env_name}\": not through `kindgi secrets set`, nor in {}",
                    shown.join(", ")
                )
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> BTreeMap<String, String> {
        let mut v = BTreeMap::new();
        parse_into(text, &mut v, &|n| {
            (n == "HOME_DIR").then(|| "/home/x".to_owned())
        })
        .unwrap();
        v
    }

    #[test]
    fn the_dotenv_grammar() {
        let v = parse(concat!(
            "# comment\n",
            "A=plain value  # trailing\n",
            "export B='single $A'\n",
            "C=\"double ${A}\\n$HOME_DIR\"\n",
            "D=\"multi\nline\"\n",
            "E=$MISSING-x\n",
            "F=${KINDGI_SECRETS_KEY}\n",
            "G=a$\n",
        ));
        assert_eq!(v["A"], "plain value");
        assert_eq!(v["B"], "single $A");
        assert_eq!(v["C"], "double plain value\n/home/x");
        assert_eq!(v["D"], "multi\nline");
        assert_eq!(v["E"], "-x");
        assert_eq!(v["F"], "", "a runtime name never expands");
        assert_eq!(v["G"], "a$");
    }

    #[test]
    fn bad_lines_name_their_line() {
        let mut v = BTreeMap::new();
        let err = parse_into("A=1\nnot a pair\n", &mut v, &|_| None).unwrap_err();
        assert_eq!(err.0, 2);
        let err = parse_into("A=\"open\n", &mut v, &|_| None).unwrap_err();
        assert!(err.1.contains("not closed"), "{err:?}");
    }

    #[test]
    fn later_files_win_and_runtime_names_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".env"), "TOKEN=app\nBASE=b\nKINDGI_X=1\n").unwrap();
        std::fs::write(dir.path().join(".env.local"), "TOKEN=local\n").unwrap();
        std::fs::create_dir(dir.path().join(".kindgi")).unwrap();
        std::fs::write(
            dir.path().join(".kindgi/secrets.env"),
            "TOKEN=kindgi-${BASE}\n",
        )
        .unwrap();
        std::fs::write(dir.path().join(".env.staging"), "TOKEN=staging\n").unwrap();
        let source = DotenvSource::pack(dir.path().to_owned());
        let local = read_env(&source, "local").unwrap();
        assert_eq!(local["TOKEN"], "kindgi-b");
        assert!(!local.contains_key("KINDGI_X"));
        assert_eq!(read_env(&source, "staging").unwrap()["TOKEN"], "staging");
        assert!(read_env(&source, "prod").unwrap().is_empty());
        // KINDGI_SECRETS_DOTENV_FILES: only the app files named, then Kindgi's own.
        let only_env = DotenvSource {
            dir: dir.path().to_owned(),
            local_files: vec![".env".into()],
        };
        std::fs::remove_file(dir.path().join(".kindgi/secrets.env")).unwrap();
        assert_eq!(read_env(&only_env, "local").unwrap()["TOKEN"], "app");
    }
}
