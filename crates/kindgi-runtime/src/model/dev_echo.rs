//! `dev-echo`: the stand-in used when no model is configured. It is **not a model**: it only
//! repeats what it is given, following a fixed script over the message trail (runtime.md
//! §3.4):
//!
//! - no tool result and no tools offered → answers the last user message;
//! - no tool result, tools offered → calls the first tool with `{"message": <last user
//!   message>}` (call id `dev-echo-call-1`, finish reason tool-use);
//! - after a tool result → answers `Tool responded: <result>`.
//!
//! The trail is the turn's: what follows its (last) user message, so a conversation's history
//! before it does not count as this turn's tool result.
//!
//! Text answers start with a warning line and a blank line, unless the answer is a JSON object
//! or array; every answer carries the warning code `dev-echo-not-a-model`.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{
    FinishReason, Message, ModelError, ModelProvider, ModelRequest, ModelResponse, Role, ToolCall,
    Usage,
};

pub const PROVIDER_ID: &str = "dev-echo";
pub const MODEL: &str = "dev-echo-v1";
pub const WARNING_CODE: &str = "dev-echo-not-a-model";
pub const WARNING: &str = "⚠ dev-echo isn't a real model: it only repeats what it's given. Add an LLM provider key (Anthropic, OpenAI, OpenRouter…) to get real answers.";

/// The dev stand-in. Stateless.
#[derive(Debug, Clone, Copy, Default)]
pub struct DevEcho;

fn with_warning(answer: String) -> String {
    let is_json_container = serde_json::from_str::<Value>(answer.trim())
        .map(|v| v.is_object() || v.is_array())
        .unwrap_or(false);
    if is_json_container {
        answer
    } else {
        format!("{WARNING}\n\n{answer}")
    }
}

fn last_user(messages: &[Message]) -> String {
    messages
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        .map(|m| m.content.clone())
        .unwrap_or_default()
}

#[async_trait]
impl ModelProvider for DevEcho {
    fn provider_id(&self) -> &str {
        PROVIDER_ID
    }

    fn model(&self) -> &str {
        MODEL
    }

    async fn invoke(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let warnings = vec![WARNING_CODE.to_owned()];
        // This turn's trail: after its user message (a conversation's history comes before).
        let turn = request
            .messages
            .iter()
            .rposition(|m| m.role == Role::User)
            .map_or(&request.messages[..], |i| &request.messages[i..]);
        if let Some(result) = turn.iter().rev().find(|m| m.role == Role::Tool) {
            return Ok(ModelResponse {
                text: with_warning(format!("Tool responded: {}", result.content)),
                tool_calls: Vec::new(),
                finish_reason: FinishReason::Stop,
                usage: Usage {
                    input_tokens: 30,
                    output_tokens: 12,
                },
                warnings,
            });
        }
        let user = last_user(&request.messages);
        match request.tools.first() {
            Some(tool) => Ok(ModelResponse {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: "dev-echo-call-1".into(),
                    name: tool.name.clone(),
                    arguments: json!({ "message": user }),
                }],
                finish_reason: FinishReason::ToolUse,
                usage: Usage {
                    input_tokens: 20,
                    output_tokens: 6,
                },
                warnings,
            }),
            None => Ok(ModelResponse {
                text: with_warning(user),
                tool_calls: Vec::new(),
                finish_reason: FinishReason::Stop,
                usage: Usage {
                    input_tokens: 20,
                    output_tokens: 6,
                },
                warnings,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelTool;

    fn msgs_for_history() -> Vec<Message> {
        vec![
            Message::user("hi"),
            Message::assistant(
                "",
                vec![ToolCall {
                    id: "dev-echo-call-1".into(),
                    name: "a.b".into(),
                    arguments: json!({"message": "hi"}),
                }],
            ),
            Message::tool("dev-echo-call-1", "{\"x\":1}"),
            Message::assistant("Tool responded: {\"x\":1}", Vec::new()),
        ]
    }

    #[tokio::test]
    async fn follows_its_script() {
        let p = DevEcho;
        let r = p
            .invoke(ModelRequest {
                messages: vec![Message::user("hi")],
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(r.text, format!("{WARNING}\n\nhi"));
        assert_eq!(r.warnings, vec![WARNING_CODE.to_string()]);

        let tools = vec![ModelTool {
            name: "a.b".into(),
            description: String::new(),
            parameters: json!({}),
        }];
        let r = p
            .invoke(ModelRequest {
                messages: vec![Message::user("hi")],
                tools: tools.clone(),
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(r.finish_reason, FinishReason::ToolUse);
        assert_eq!(r.tool_calls[0].name, "a.b");
        assert_eq!(r.tool_calls[0].arguments, json!({"message": "hi"}));

        let msgs = vec![
            Message::user("hi"),
            Message::assistant("", r.tool_calls.clone()),
            Message::tool("dev-echo-call-1", "{\"x\":1}"),
        ];
        let r = p
            .invoke(ModelRequest {
                messages: msgs,
                tools,
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(r.text, format!("{WARNING}\n\nTool responded: {{\"x\":1}}"));
        assert_eq!(
            r.usage,
            Usage {
                input_tokens: 30,
                output_tokens: 12
            }
        );

        // A tool result in the history of an earlier turn is not this turn's.
        let mut history = msgs_for_history();
        history.push(Message::user("again"));
        let r = p
            .invoke(ModelRequest {
                messages: history,
                tools: vec![ModelTool {
                    name: "a.b".into(),
                    description: String::new(),
                    parameters: json!({}),
                }],
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(r.finish_reason, FinishReason::ToolUse);
        assert_eq!(r.tool_calls[0].arguments, json!({"message": "again"}));

        let r = p
            .invoke(ModelRequest {
                messages: vec![Message::user("{\"a\":1}")],
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(
            r.text, "{\"a\":1}",
            "a JSON object answer gets no warning line"
        );
    }
}
