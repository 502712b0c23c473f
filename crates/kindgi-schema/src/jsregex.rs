//! ECMAScript regular expressions (`regress`) with the `u` flag, as Ajv compiles `pattern` and
//! `patternProperties`, and V8's wording for a pattern that does not compile.

use regress::Regex;

use crate::CompileError;

/// Compiles `pattern` the way `new RegExp(pattern, "u")` does.
pub(crate) fn compile_u(pattern: &str) -> Result<Regex, CompileError> {
    Regex::with_flags(pattern, "u").map_err(|e| CompileError {
        name: "SyntaxError".into(),
        message: format!("Invalid regular expression: /{pattern}/u: {}", v8_reason(pattern, &e.text)),
    })
}

fn v8_reason(pattern: &str, text: &str) -> String {
    match text {
        "Unbalanced parenthesis" => {
            if unmatched_close(pattern) {
                "Unmatched ')'".into()
            } else {
                "Unterminated group".into()
            }
        }
        "Unbalanced bracket" => "Unterminated character class".into(),
        "Invalid character escape" | "Invalid class set escape: expected {" => "Invalid escape".into(),
        "Incomplete escape" | "Unterminated escape" => "\\ at end of pattern".into(),
        "Invalid atom character" => "Lone quantifier brackets".into(),
        "Quantifier not allowed here" | "Invalid quantifier" => "Nothing to repeat".into(),
        "Invalid braced quantifier" => "Incomplete quantifier".into(),
        "Invalid character range" => "Range out of order in character class".into(),
        "Invalid property name" | "Invalid character at property escape start" => "Invalid property name".into(),
        "Invalid unicode escape" => "Invalid Unicode escape".into(),
        "Invalid group modifier" => "Invalid group".into(),
        "Invalid token at named capture group identifier" => "Invalid capture group name".into(),
        "Unexpected end of named backreference" => "Invalid named reference".into(),
        other => other.to_owned(),
    }
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
        assert_eq!(m("^\\-$"), "Invalid regular expression: /^\\-$/u: Invalid escape");
        assert_eq!(m("("), "Invalid regular expression: /(/u: Unterminated group");
        assert_eq!(m("[a-"), "Invalid regular expression: /[a-/u: Unterminated character class");
        assert!(compile_u("^\\p{Lu}\\p{Ll}+$").is_ok());
    }
}
