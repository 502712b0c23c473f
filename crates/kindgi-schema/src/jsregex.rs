//! ECMAScript regular expressions (`regress`) with the `u` flag, as Ajv compiles `pattern` and
//! `patternProperties`, and V8's wording for a pattern that does not compile.

use regress::Regex;

use crate::CompileError;

/// Deepest group nesting (lookarounds included) a pattern may have: `regress` parses,
/// optimises and emits recursively, a few KiB of stack a level (tens in unoptimised builds), so
/// a pattern of a few hundred `(` crashed the process with a stack overflow.
pub(crate) const MAX_NESTING: usize = 32;

/// Most alternatives (`|`) a pattern may have: `regress` recurses once per alternative (3,000
/// overflowed a 2 MiB stack in an unoptimised build).
pub(crate) const MAX_ALTERNATIVES: usize = 4096;

/// The stack a complex pattern compiles on (allocated only for patterns past
/// [`SIMPLE_NESTING`] / [`SIMPLE_ALTERNATIVES`], which compile on the caller's stack).
const COMPILE_STACK: usize = 32 * 1024 * 1024;
const SIMPLE_NESTING: usize = 4;
const SIMPLE_ALTERNATIVES: usize = 32;

/// Why `pattern` is too complex to compile safely, if it is.
pub(crate) fn too_complex(pattern: &str) -> Option<String> {
    let (depth, alternatives) = structure(pattern);
    if depth > MAX_NESTING {
        return Some(format!(
            "its groups nest {depth} deep, more than the {MAX_NESTING} levels Kindgi compiles"
        ));
    }
    if alternatives > MAX_ALTERNATIVES {
        return Some(format!(
            "it has {alternatives} alternatives (|), more than the {MAX_ALTERNATIVES} Kindgi compiles"
        ));
    }
    None
}

/// The pattern's deepest group nesting and its number of `|`, outside classes and escapes
/// (one pass, no recursion).
fn structure(pattern: &str) -> (usize, usize) {
    let (mut depth, mut deepest, mut alternatives) = (0usize, 0usize, 0usize);
    let mut in_class = false;
    let mut bytes = pattern.bytes();
    while let Some(b) = bytes.next() {
        match b {
            b'\\' => {
                bytes.next();
            }
            b'[' if !in_class => in_class = true,
            b']' if in_class => in_class = false,
            b'(' if !in_class => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b')' if !in_class => depth = depth.saturating_sub(1),
            b'|' if !in_class => alternatives += 1,
            _ => {}
        }
    }
    (deepest, alternatives)
}

/// `Regex::with_flags`, refusing patterns [`too_complex`] to compile safely (`Err(why)`), and
/// compiling the complex-but-allowed ones on a stack of their own.
pub(crate) fn guarded(pattern: &str, flags: &str) -> Result<Result<Regex, regress::Error>, String> {
    if let Some(why) = too_complex(pattern) {
        return Err(why);
    }
    let (depth, alternatives) = structure(pattern);
    if depth <= SIMPLE_NESTING && alternatives <= SIMPLE_ALTERNATIVES {
        return Ok(Regex::with_flags(pattern, flags));
    }
    Ok(stacker::grow(COMPILE_STACK, || {
        Regex::with_flags(pattern, flags)
    }))
}

/// [`compile_u`], naming the schema location in the error when the pattern is too complex.
pub(crate) fn compile_at(pattern: &str, at: &str) -> Result<Regex, CompileError> {
    compile_u(pattern).map_err(|mut e| {
        if e.name == "Error" {
            e.message = format!("{} (at \"{at}\")", e.message);
        }
        e
    })
}

/// Compiles `pattern` the way `new RegExp(pattern, "u")` does. A pattern too complex to compile
/// safely (see [`too_complex`]) is a compile error saying why and what to do.
pub(crate) fn compile_u(pattern: &str) -> Result<Regex, CompileError> {
    let compiled = guarded(pattern, "u").map_err(|why| {
        let shown: String = pattern.chars().take(80).collect();
        let more = if shown.len() < pattern.len() {
            "…"
        } else {
            ""
        };
        CompileError::new(format!(
            "pattern /{shown}{more}/ is too complex: {why}; simplify the pattern"
        ))
    })?;
    compiled.map_err(|e| CompileError {
        name: "SyntaxError".into(),
        message: format!(
            "Invalid regular expression: /{pattern}/u: {}",
            v8_reason(pattern, &e.text)
        ),
    })
}

fn v8_reason(pattern: &str, text: &str) -> String {
    if text.starts_with("Backreference to invalid named capture group") {
        return "Invalid named capture referenced".into();
    }
    if text.starts_with("Range values reversed") {
        return "Range out of order in character class".into();
    }
    match text {
        "Unbalanced parenthesis" => {
            if unmatched_close(pattern) {
                "Unmatched ')'".into()
            } else {
                "Unterminated group".into()
            }
        }
        "Unbalanced bracket" => "Unterminated character class".into(),
        "Invalid character escape" => {
            if bad_control_escape(pattern) {
                "Invalid Unicode escape".into()
            } else {
                "Invalid escape".into()
            }
        }
        "Invalid class set escape: expected {" => "Invalid escape".into(),
        "Incomplete escape" | "Unterminated escape" => "\\ at end of pattern".into(),
        "Invalid atom character" => atom_problem(pattern).into(),
        "Quantifier not allowed here" => {
            if quantified_lookaround(pattern) {
                "Invalid quantifier".into()
            } else {
                "Nothing to repeat".into()
            }
        }
        "Invalid quantifier" | "Invalid braced quantifier" => {
            if reversed_braces(pattern) {
                "numbers out of order in {} quantifier".into()
            } else {
                "Incomplete quantifier".into()
            }
        }
        "Invalid character range" => "Invalid character class".into(),
        "Invalid property name" | "Invalid character at property escape start" => {
            "Invalid property name".into()
        }
        "Invalid unicode escape" => "Invalid Unicode escape".into(),
        "Invalid group modifier" => "Invalid group".into(),
        "Invalid token at named capture group identifier" => {
            if pattern.contains("(?<") && !pattern.contains("(?<=") && !pattern.contains("(?<!") {
                "Invalid capture group name".into()
            } else {
                "Invalid group".into()
            }
        }
        "Unexpected end of named backreference" => "Invalid named reference".into(),
        other => other.to_owned(),
    }
}

/// `\c` not followed by an ASCII letter.
fn bad_control_escape(pattern: &str) -> bool {
    let b = pattern.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            if b.get(i + 1) == Some(&b'c') && !b.get(i + 2).is_some_and(u8::is_ascii_alphabetic) {
                return true;
            }
            i += 2;
            continue;
        }
        i += 1;
    }
    false
}

/// `{n,m}` with n > m.
fn reversed_braces(pattern: &str) -> bool {
    let b = pattern.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'{' {
            if let Some((lo, Some(hi), _)) = braced(&b[i..]) {
                if lo > hi {
                    return true;
                }
            }
        }
        i += 1;
    }
    false
}

/// Parses `{n}`, `{n,}`, `{n,m}` at the start of `b`: (n, m, length).
fn braced(b: &[u8]) -> Option<(u64, Option<u64>, usize)> {
    let mut i = 1;
    let num = |i: &mut usize| -> Option<u64> {
        let s = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        if *i == s {
            None
        } else {
            std::str::from_utf8(&b[s..*i]).ok()?.parse().ok()
        }
    };
    let lo = num(&mut i)?;
    let mut hi = Some(lo);
    if b.get(i) == Some(&b',') {
        i += 1;
        hi = num(&mut i);
        if hi.is_none() {
            hi = Some(u64::MAX);
        }
    }
    if b.get(i) != Some(&b'}') {
        return None;
    }
    Some((lo, hi, i + 1))
}

/// A quantifier right after a lookaround group.
fn quantified_lookaround(pattern: &str) -> bool {
    let b = pattern.as_bytes();
    let mut stack: Vec<bool> = Vec::new();
    let mut i = 0;
    let mut in_class = false;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'[' if !in_class => in_class = true,
            b']' if in_class => in_class = false,
            b'(' if !in_class => {
                let rest = &pattern[i..];
                stack.push(
                    rest.starts_with("(?=")
                        || rest.starts_with("(?!")
                        || rest.starts_with("(?<=")
                        || rest.starts_with("(?<!"),
                );
            }
            b')' if !in_class => {
                let look = stack.pop().unwrap_or(false);
                if look && matches!(b.get(i + 1), Some(b'*' | b'+' | b'?' | b'{')) {
                    return true;
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// V8's message for a character that cannot start an atom.
fn atom_problem(pattern: &str) -> &'static str {
    let b = pattern.as_bytes();
    let mut i = 0;
    let mut can_quantify = false;
    while i < b.len() {
        match b[i] {
            b'\\' => {
                i += 2;
                can_quantify = true;
                continue;
            }
            b'[' => {
                i += 1;
                while i < b.len() && b[i] != b']' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                can_quantify = true;
            }
            b'(' => {
                can_quantify = false;
                let rest = &pattern[i..];
                for pre in ["(?:", "(?=", "(?!", "(?<=", "(?<!"] {
                    if rest.starts_with(pre) {
                        i += pre.len() - 1;
                        break;
                    }
                }
            }
            b')' => can_quantify = true,
            b'|' | b'^' | b'$' => can_quantify = false,
            b'*' | b'+' | b'?' => {
                if !can_quantify {
                    return "Nothing to repeat";
                }
                if b.get(i + 1) == Some(&b'?') {
                    i += 1;
                }
                can_quantify = false;
            }
            b'{' => match braced(&b[i..]) {
                Some((_, _, len)) => {
                    if !can_quantify {
                        return "Nothing to repeat";
                    }
                    i += len - 1;
                    if b.get(i + 1) == Some(&b'?') {
                        i += 1;
                    }
                    can_quantify = false;
                }
                None => return "Lone quantifier brackets",
            },
            b'}' | b']' => return "Lone quantifier brackets",
            _ => can_quantify = true,
        }
        i += 1;
    }
    "Nothing to repeat"
}

/// Whether the pattern has a `)` with no open group (outside classes and escapes).
fn unmatched_close(pattern: &str) -> bool {
    let mut depth = 0i32;
    let mut in_class = false;
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '(' if !in_class => depth += 1,
            ')' if !in_class => {
                depth -= 1;
                if depth < 0 {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::compile_u;

    #[test]
    fn v8_messages() {
        let m = |p: &str| compile_u(p).err().map(|e| e.message).unwrap_or_default();
        assert_eq!(
            m("^\\-$"),
            "Invalid regular expression: /^\\-$/u: Invalid escape"
        );
        assert_eq!(
            m("("),
            "Invalid regular expression: /(/u: Unterminated group"
        );
        assert_eq!(
            m("[a-"),
            "Invalid regular expression: /[a-/u: Unterminated character class"
        );
        assert!(compile_u("^\\p{Lu}\\p{Ll}+$").is_ok());
    }

    /// V8's reasons (Node 20/24) for patterns regress also refuses.
    #[test]
    fn v8_reasons_table() {
        let table: &[(&str, &str)] = &[
            ("a**", "Nothing to repeat"),
            ("a{", "Incomplete quantifier"),
            ("[z-a]", "Range out of order in character class"),
            ("\\k<x>", "Invalid named capture referenced"),
            ("]", "Lone quantifier brackets"),
            ("}", "Lone quantifier brackets"),
            ("{", "Lone quantifier brackets"),
            ("a{1", "Incomplete quantifier"),
            ("a{2,1}", "numbers out of order in {} quantifier"),
            ("?", "Nothing to repeat"),
            ("+a", "Nothing to repeat"),
            ("(?<a>x)(?<a>y)", "Duplicate capture group name"),
            ("(?<1a>x)", "Invalid capture group name"),
            ("\\p{Nope}", "Invalid property name"),
            ("\\p{L", "Invalid property name"),
            ("\\u{110000}", "Invalid Unicode escape"),
            ("\\c", "Invalid Unicode escape"),
            ("(?", "Invalid group"),
            ("(?=a)*", "Invalid quantifier"),
            ("a)", "Unmatched ')'"),
            ("(", "Unterminated group"),
            ("[", "Unterminated character class"),
            ("\\", "\\ at end of pattern"),
            ("x{1}{2}", "Nothing to repeat"),
            ("(?<a>", "Unterminated group"),
            ("[\\d-z]", "Invalid character class"),
            ("\\1", "Invalid escape"),
            ("(?<=a)+", "Invalid quantifier"),
            ("a|*", "Nothing to repeat"),
            ("\\k", "Invalid named reference"),
            ("\\q", "Invalid escape"),
            ("[\\q]", "Invalid escape"),
            ("\\8", "Invalid escape"),
            ("(?:", "Unterminated group"),
            ("\\x1", "Invalid escape"),
            ("\\u12", "Invalid Unicode escape"),
            ("\\-", "Invalid escape"),
            ("[b-a]", "Range out of order in character class"),
            ("^*", "Nothing to repeat"),
        ];
        for (pattern, reason) in table {
            let got = compile_u(pattern)
                .err()
                .map(|e| e.message)
                .unwrap_or_default();
            assert_eq!(
                got,
                format!("Invalid regular expression: /{pattern}/u: {reason}")
            );
        }
    }
}
