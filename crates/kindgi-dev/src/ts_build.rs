//! The TypeScript transform `kindgi dev` runs a TypeScript pack through: every `.ts`/`.mts`/
//! `.cts` file of the pack (not `node_modules`, not build output) becomes a `.js`/`.mjs`/`.cjs`
//! file in a build tree inside the pack, `.kindgi/dev/build/` (the `.kindgi` folder is
//! `kindgi dev`'s state, never a source), and every other file is copied beside them. The
//! transform is oxc's, in process: enums, namespaces, parameter properties and (legacy,
//! `experimentalDecorators`) decorators are lowered, which Node's type stripping refuses, and
//! NodeNext `.js` specifiers then name the emitted `.js` files. `.ts` specifiers are rewritten
//! to `.js`. Bare imports resolve upward from the build tree, so through the pack's own
//! `node_modules` (or, when the pack has none with `@kindgi/*` in it, through a link to the
//! kindgi-cli wheel's, made by [`link_node_modules`]).

use std::path::{Path, PathBuf};

use oxc::allocator::Allocator;
use oxc::codegen::Codegen;
use oxc::parser::Parser;
use oxc::semantic::SemanticBuilder;
use oxc::span::SourceType;
use oxc::transformer::{RewriteExtensionsMode, TransformOptions, Transformer};

use crate::error::DevError;

/// Folders that are never part of the pack's sources.
const SKIP_DIRS: [&str; 7] = [
    "node_modules",
    ".kindgi",
    ".git",
    "dist",
    "target",
    ".venv",
    "__pycache__",
];

/// The build tree of the pack in `pack_dir`.
pub fn build_dir(pack_dir: &Path) -> PathBuf {
    pack_dir.join(".kindgi").join("dev").join("build")
}

/// What a build produced.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Built {
    /// TypeScript files transformed.
    pub transformed: usize,
    /// Other files copied.
    pub copied: usize,
}

/// Transforms the pack in `pack_dir` into a fresh [`build_dir`]; a file that does not parse
/// or transform fails the build with its path and oxc's messages.
pub fn build(pack_dir: &Path) -> Result<Built, DevError> {
    let out = build_dir(pack_dir);
    if out.exists() {
        std::fs::remove_dir_all(&out).map_err(|source| io("cannot clear", &out, source))?;
    }
    std::fs::create_dir_all(&out).map_err(|source| io("cannot create", &out, source))?;
    let mut files = Vec::new();
    sources(pack_dir, pack_dir, &mut files, 0);
    let mut built = Built::default();
    for rel in files {
        let from = pack_dir.join(&rel);
        let (to, typescript) = match emitted_name(&rel) {
            Some(js) => (out.join(js), true),
            None => (out.join(&rel), false),
        };
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|source| io("cannot create", parent, source))?;
        }
        if typescript {
            let text = std::fs::read_to_string(&from)
                .map_err(|source| io("cannot read", &from, source))?;
            let mut js = transform(&from, &text)?;
            if rel.parent() == Some(Path::new("")) && is_config(&rel) {
                js = js_globs(&js);
            }
            std::fs::write(&to, js).map_err(|source| io("cannot write", &to, source))?;
            built.transformed += 1;
        } else {
            std::fs::copy(&from, &to).map_err(|source| io("cannot copy", &from, source))?;
            built.copied += 1;
        }
    }
    Ok(built)
}

/// Links `<build>/node_modules` to `modules` (the kindgi-cli wheel's), for a pack without its
/// own `@kindgi/*` packages: ES modules find bare imports only in `node_modules` folders
/// above the importing file.
pub fn link_node_modules(pack_dir: &Path, modules: &Path) -> Result<(), DevError> {
    let link = build_dir(pack_dir).join("node_modules");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(modules, &link)
            .map_err(|source| io("cannot link", &link, source))
    }
    #[cfg(not(unix))]
    {
        let _ = modules;
        Err(DevError::BadPack {
            dir: pack_dir.to_owned(),
            message: format!("cannot link {}: only supported on unix", link.display()),
        })
    }
}

/// The emitted name of a TypeScript source (`a/b.ts` → `a/b.js`), `None` for any other file.
/// Declaration files (`.d.ts`) emit nothing and are not sources; see [`sources`].
pub fn emitted_name(rel: &Path) -> Option<PathBuf> {
    let js = match rel.extension()?.to_str()? {
        "ts" => "js",
        "mts" => "mjs",
        "cts" => "cjs",
        _ => return None,
    };
    Some(rel.with_extension(js))
}

fn is_config(rel: &Path) -> bool {
    rel.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| crate::typescript::CONFIG_FILES.contains(&n))
}

/// The pack config with its discovery globs (`'tools/**/*.ts'`, the scaffolds' default) made
/// to match the emitted files (`'tools/**/*.js'`): every string literal holding a `*` whose
/// pattern ends in `.ts`/`.mts`/`.cts`. The config is data the indexer reads, so only glob
/// strings change.
pub fn js_globs(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find(['"', '\'', '`', '/']) {
        let quote = rest[at..].chars().next().unwrap_or('"');
        // Comments are skipped whole: an apostrophe in one (`the pack's id`) is no quote.
        if quote == '/' {
            let comment_end = if rest[at..].starts_with("//") {
                rest[at..].find('\n').map_or(rest.len(), |n| at + n)
            } else if rest[at..].starts_with("/*") {
                rest[at + 2..]
                    .find("*/")
                    .map_or(rest.len(), |n| at + 2 + n + 2)
            } else {
                at + 1
            };
            out.push_str(&rest[..comment_end]);
            rest = &rest[comment_end..];
            continue;
        }
        out.push_str(&rest[..=at]);
        rest = &rest[at + 1..];
        let mut end = None;
        let mut escaped = false;
        for (i, c) in rest.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                c if c == quote => {
                    end = Some(i);
                    break;
                }
                _ => {}
            }
        }
        let Some(end) = end else {
            break;
        };
        let literal = &rest[..end];
        out.push_str(&glob_to_js(literal));
        out.push(quote);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

fn glob_to_js(literal: &str) -> String {
    if !literal.contains('*') {
        return literal.to_owned();
    }
    for (ts, js) in [(".mts", ".mjs"), (".cts", ".cjs"), (".ts", ".js")] {
        if let Some(stem) = literal.strip_suffix(ts) {
            return format!("{stem}{js}");
        }
    }
    literal.to_owned()
}

fn is_declaration(name: &str) -> bool {
    [".d.ts", ".d.mts", ".d.cts"]
        .iter()
        .any(|e| name.ends_with(e))
}

/// The pack's files, relative to `root`: skipping [`SKIP_DIRS`], hidden files (`.env` holds
/// secrets; the service gets its environment from `kindgi dev`) and declaration files.
fn sources(root: &Path, dir: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    if depth > 32 {
        return;
    }
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in read.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        if kind.is_dir() {
            if !SKIP_DIRS.contains(&name.as_ref()) {
                sources(root, &entry.path(), out, depth + 1);
            }
            continue;
        }
        if !kind.is_file() || is_declaration(&name) {
            continue;
        }
        if let Ok(rel) = entry.path().strip_prefix(root) {
            out.push(rel.to_owned());
        }
    }
}

/// The options every pack file is transformed with: types removed, TypeScript-only syntax
/// lowered, decorators as `experimentalDecorators` (the only kind oxc lowers), everything
/// else left to Node (no down-levelling), `.ts` import specifiers rewritten to `.js`.
fn options() -> TransformOptions {
    let mut options = TransformOptions::default();
    options.typescript.rewrite_import_extensions = Some(RewriteExtensionsMode::Rewrite);
    options.decorator.legacy = true;
    options
}

/// One file's JavaScript.
pub fn transform(path: &Path, text: &str) -> Result<String, DevError> {
    let failed = |messages: Vec<String>| DevError::Transform {
        path: path.to_owned(),
        message: messages.join("\n"),
    };
    let allocator = Allocator::default();
    let source_type = SourceType::from_path(path)
        .map_err(|e| failed(vec![e.to_string()]))?
        .with_module(true);
    let parsed = Parser::new(&allocator, text, source_type).parse();
    if parsed.panicked || !parsed.diagnostics.is_empty() {
        return Err(failed(
            parsed.diagnostics.iter().map(|d| d.to_string()).collect(),
        ));
    }
    let mut program = parsed.program;
    let semantic = SemanticBuilder::new().with_enum_eval(true).build(&program);
    let scoping = semantic.semantic.into_scoping();
    let transformed =
        Transformer::new(&allocator, path, &options()).build_with_scoping(scoping, &mut program);
    if !transformed.diagnostics.is_empty() {
        return Err(failed(
            transformed
                .diagnostics
                .iter()
                .map(|d| d.to_string())
                .collect(),
        ));
    }
    Ok(Codegen::new().build(&program).code)
}

fn io(what: &'static str, path: &Path, source: std::io::Error) -> DevError {
    DevError::Io {
        what,
        path: path.to_owned(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_properties_enums_and_specifiers_become_javascript() {
        let ts = "import { woo } from './lib/woo.ts';\nexport const client = woo;\nenum Kind { A, B }\nexport class Shop { constructor(private readonly url: string) {} kind(): Kind { return Kind.B; } }\n";
        let js = transform(Path::new("src/shop.ts"), ts).unwrap_or_else(|e| e.to_string());
        assert!(js.contains("this.url = url"), "{js}");
        assert!(js.contains("./lib/woo.js"), "{js}");
        assert!(!js.contains("private readonly"), "{js}");
        assert!(!js.contains("enum Kind"), "{js}");
    }

    #[test]
    fn a_syntax_error_names_the_file() {
        let err = transform(Path::new("src/bad.ts"), "export const = ;")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("src/bad.ts"), "{err}");
    }

    #[test]
    fn discovery_globs_follow_the_emitted_files() {
        let config = "export default { discovery: { tools: \"tools/**/*.ts\", flows: 'flows/*.mts' }, pack: { id: \"a.ts\", note: \"say \\\"*.ts\" } };";
        let js = js_globs(config);
        assert!(js.contains("\"tools/**/*.js\""), "{js}");
        assert!(js.contains("'flows/*.mjs'"), "{js}");
        assert!(js.contains("\"a.ts\""), "{js}");
        // An apostrophe in a comment opens no string (examples/my-pack-ts's config has one).
        let commented =
            "// the pack's id\n/* it's */ const c = { tools: 'tools/**/*.ts', n: 6 / 2 };";
        let js = js_globs(commented);
        assert!(js.contains("'tools/**/*.js'"), "{js}");
        assert!(js.starts_with("// the pack's id\n/* it's */"), "{js}");
    }

    #[test]
    fn only_typescript_sources_change_name() {
        assert_eq!(
            emitted_name(Path::new("a/b.ts")),
            Some(PathBuf::from("a/b.js"))
        );
        assert_eq!(
            emitted_name(Path::new("x.mts")),
            Some(PathBuf::from("x.mjs"))
        );
        assert_eq!(emitted_name(Path::new("p.json")), None);
        assert!(is_declaration("types.d.ts"));
    }
}
