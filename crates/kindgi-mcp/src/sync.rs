//! Resources and prompts of a connected server, for the API's proxy routes
//! (`GET /v1/mcp/endpoints/{id}/resources`, `…/prompts`, …): `resources/list`,
//! `resources/read`, `prompts/list`, `prompts/get`, each within the client's timeout, lists
//! followed across pages with the same loop guard as `tools/list`. Answers are the MCP
//! results as JSON, as the server sent them.
//!
//! A child module of `client` (declared there), so it can use the session.

use std::collections::HashSet;
use std::future::Future;

use rmcp::model::{GetPromptRequestParams, PaginatedRequestParams, ReadResourceRequestParams};
use rmcp::service::ServiceError;
use serde_json::{Map, Value};

use super::{MAX_LIST_PAGES, McpClient};
use crate::error::McpError;

impl McpClient {
    /// Runs one request within the client's timeout, mapping failures to [`McpError`].
    async fn bounded<T>(
        &self,
        what: String,
        request: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, McpError> {
        match tokio::time::timeout(self.options.timeout, request).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(self.service_error(what, e).await),
            Err(_) => Err(McpError::Timeout {
                endpoint: self.endpoint.clone(),
                what,
                ms: self.options.timeout.as_millis() as u64,
            }),
        }
    }

    fn to_json<T: serde::Serialize>(&self, what: &str, value: &T) -> Result<Value, McpError> {
        serde_json::to_value(value).map_err(|e| McpError::Protocol {
            endpoint: self.endpoint.clone(),
            what: what.to_owned(),
            message: format!("the answer could not be read: {e}"),
        })
    }

    fn pagination_error(&self, what: &str, next: Option<&str>) -> McpError {
        let message = match next {
            Some(c) => format!(
                "the server sent the page cursor \"{c}\" twice; fix the server's pagination"
            ),
            None => format!(
                "the server's list runs past {MAX_LIST_PAGES} pages; fix the server's pagination"
            ),
        };
        McpError::Protocol {
            endpoint: self.endpoint.clone(),
            what: what.to_owned(),
            message,
        }
    }

    /// Every resource (`resources/list`, all pages), as JSON.
    pub async fn list_resources(&self) -> Result<Vec<Value>, McpError> {
        let what = "resources/list";
        let peer = self.service.peer();
        let (mut out, mut seen, mut cursor) = (Vec::new(), HashSet::new(), None::<String>);
        for _ in 0..MAX_LIST_PAGES {
            let params = cursor
                .take()
                .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
            let page = self
                .bounded(what.into(), peer.list_resources(params))
                .await?;
            for r in &page.resources {
                out.push(self.to_json(what, r)?);
            }
            match page.next_cursor {
                None => return Ok(out),
                Some(next) if !seen.insert(next.clone()) => {
                    return Err(self.pagination_error(what, Some(&next)));
                }
                Some(next) => cursor = Some(next),
            }
        }
        Err(self.pagination_error(what, None))
    }

    /// `resources/read` of `uri`: the `ReadResourceResult` (`{contents: [...]}`) as JSON.
    pub async fn read_resource(&self, uri: &str) -> Result<Value, McpError> {
        let what = format!("resources/read \"{uri}\"");
        let params = ReadResourceRequestParams::new(uri.to_owned());
        let result = self
            .bounded(what.clone(), self.service.peer().read_resource(params))
            .await?;
        self.to_json(&what, &result)
    }

    /// Every prompt (`prompts/list`, all pages), as JSON.
    pub async fn list_prompts(&self) -> Result<Vec<Value>, McpError> {
        let what = "prompts/list";
        let peer = self.service.peer();
        let (mut out, mut seen, mut cursor) = (Vec::new(), HashSet::new(), None::<String>);
        for _ in 0..MAX_LIST_PAGES {
            let params = cursor
                .take()
                .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
            let page = self.bounded(what.into(), peer.list_prompts(params)).await?;
            for p in &page.prompts {
                out.push(self.to_json(what, p)?);
            }
            match page.next_cursor {
                None => return Ok(out),
                Some(next) if !seen.insert(next.clone()) => {
                    return Err(self.pagination_error(what, Some(&next)));
                }
                Some(next) => cursor = Some(next),
            }
        }
        Err(self.pagination_error(what, None))
    }

    /// `prompts/get` of `name` with `arguments`: the `GetPromptResult` as JSON.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<Value, McpError> {
        let what = format!("prompts/get \"{name}\"");
        let mut params = GetPromptRequestParams::new(name.to_owned());
        if let Some(args) = arguments {
            params = params.with_arguments(args);
        }
        let result = self
            .bounded(what.clone(), self.service.peer().get_prompt(params))
            .await?;
        self.to_json(&what, &result)
    }
}
