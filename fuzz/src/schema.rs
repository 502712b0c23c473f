//! The schema target's checks, shared by the pack dialect (`schema_pack`) and the MCP
//! dialects (`schema_mcp`): the input is a schema, a NUL byte, and an instance.

use crate::{instances, is_json_pointer, json, split_nul, within_budget};
use kindgi_schema::{CompileOptions, Mode, Side, Validator};
use serde_json::Value;

/// Compiles the input's schema under `mode` (both sides) and validates its instance.
pub fn check(data: &[u8], mode: Mode) {
    let (head, tail) = split_nul(data);
    let Some(schema) = json(head) else {
        return;
    };
    let instances = instances(tail);
    for side in [Side::Input, Side::Output] {
        let options = CompileOptions { mode, side };
        let compiled = within_budget("compile", || kindgi_schema::compile(&schema, options));
        match compiled {
            Ok(validator) => {
                for instance in &instances {
                    check_validation(&validator, instance, side);
                }
            }
            Err(e) => {
                // A refusal is an error with Ajv's class name and a sentence, never empty.
                assert!(
                    matches!(e.name.as_str(), "Error" | "SyntaxError" | "TypeError"),
                    "compile error with an unexpected name {:?}: {}",
                    e.name,
                    e.message
                );
                assert!(!e.message.is_empty(), "compile error with no message");
            }
        }
    }
}

fn check_validation(validator: &Validator, instance: &Value, side: Side) {
    let full = within_budget("validate", || validator.validate(instance));
    let quick = within_budget("is_valid", || validator.is_valid(instance));
    assert_eq!(
        full.is_ok(),
        quick,
        "validate and is_valid disagree on {instance}"
    );
    if let Err(issues) = &full {
        assert!(!issues.is_empty(), "a failed validation with no issue");
        for issue in issues.iter() {
            let at = issue.instance_path();
            assert!(
                is_json_pointer(at),
                "instancePath {at:?} is no JSON Pointer"
            );
            assert!(
                instance.pointer(at).is_some(),
                "instancePath {at:?} is not in the instance {instance}"
            );
            assert!(
                issue.schema_path().starts_with('#') || issue.schema_path().contains("#/"),
                "schemaPath {:?} is no schema pointer",
                issue.schema_path()
            );
            assert!(!issue.message().is_empty(), "an issue with no message");
        }
        // Deterministic: the same instance gets the same issues.
        let shape = |i: &kindgi_schema::Issues| serde_json::to_value(i.to_vec()).ok();
        let again = validator.validate(instance).err();
        assert_eq!(
            Some(shape(issues)),
            again.as_ref().map(shape),
            "validation is not deterministic"
        );
    }
    let mut copy = instance.clone();
    let in_place = within_budget("validate_in_place", || {
        validator.validate_in_place(&mut copy)
    });
    if !validator.fills_defaults() {
        assert_eq!(
            &copy, instance,
            "validation without defaults changed the instance"
        );
        assert_eq!(
            in_place.is_ok(),
            full.is_ok(),
            "validate_in_place disagrees"
        );
    } else {
        assert_eq!(side, Side::Input, "an output schema fills defaults");
    }
}
