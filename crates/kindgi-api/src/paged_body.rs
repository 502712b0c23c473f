//! List answers of unbounded size (a run's whole journal, runs with their outputs) written
//! as the client reads them: the body reads the store a page at a time, and asks for the
//! next page only once the previous one has been taken by the connection, so a client that
//! stops reading pins one page (plus what the connection buffers), never the whole answer.
//!
//! The bytes are exactly those of `Json(page::page(data, nextCursor, {}))`:
//! `{"data":[…],"hasMore":…,"nextCursor"?:…}`, sent chunked. The first page is read before
//! the answer starts, so a store failure there is a proper error answer; a failure after
//! that can only cut the body short (the connection is closed, and the cause logged). Each
//! chunk is charged against the server's [`BodyBudget`] until the connection has written it.

use std::io;

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, header};
use axum::response::Response;
use futures::future::BoxFuture;
use kindgi_runtime::RuntimeError;
use serde::Serialize;

use crate::body_budget::BodyBudget;

/// Where items come from, a page at a time.
pub(crate) trait PageSource: Send + 'static {
    type Item: Send + 'static;
    /// Where an item stands in the order (what the next page starts after).
    type Pos: Clone + Send + 'static;
    /// Up to `n` items after `after` (from the start when `None`), in order.
    fn fetch(
        &self,
        after: Option<Self::Pos>,
        n: u32,
    ) -> BoxFuture<'_, Result<Vec<Self::Item>, RuntimeError>>;
    fn pos(&self, item: &Self::Item) -> Self::Pos;
    /// The item on the wire.
    fn write(&self, item: &Self::Item, out: &mut Vec<u8>) -> Result<(), serde_json::Error>;
    /// The `nextCursor` after `last`.
    fn cursor(&self, last: &Self::Pos) -> String;
}

/// Writes `value` as compact JSON, as `axum::Json` does.
pub(crate) fn write_json(value: &impl Serialize, out: &mut Vec<u8>) -> serde_json::Result<()> {
    serde_json::to_writer(out, value)
}

struct Paged<S: PageSource> {
    source: S,
    budget: BodyBudget,
    page: u32,
    /// Items to send at most (`None`: every one there is).
    limit: Option<usize>,
    sent: usize,
    ready: Vec<S::Item>,
    last: Option<S::Pos>,
    /// No page after `ready`.
    exhausted: bool,
    /// An item past `limit` exists.
    more: bool,
    opened: bool,
    closed: bool,
}

impl<S: PageSource> Paged<S> {
    async fn read(&mut self) -> Result<(), RuntimeError> {
        let mut n = self.page;
        if let Some(limit) = self.limit {
            // One past the limit, to tell whether there is more.
            let left = limit.saturating_sub(self.sent) + 1;
            n = n.min(u32::try_from(left).unwrap_or(u32::MAX));
        }
        let mut items = self.source.fetch(self.last.clone(), n).await?;
        self.exhausted = items.len() < n as usize;
        if let Some(limit) = self.limit {
            let room = limit.saturating_sub(self.sent);
            if items.len() > room {
                items.truncate(room);
                self.more = true;
                self.exhausted = true;
            }
        }
        self.ready = items;
        Ok(())
    }

    /// The chunk of the page read last (and the tail, when it was the last page).
    fn chunk(&mut self) -> Result<Vec<u8>, serde_json::Error> {
        let mut out = Vec::new();
        if !self.opened {
            out.extend_from_slice(b"{\"data\":[");
            self.opened = true;
        }
        for item in std::mem::take(&mut self.ready) {
            if self.sent > 0 {
                out.push(b',');
            }
            self.source.write(&item, &mut out)?;
            self.last = Some(self.source.pos(&item));
            self.sent += 1;
        }
        if self.exhausted {
            out.extend_from_slice(b"],\"hasMore\":");
            match (self.more, &self.last) {
                (true, Some(last)) => {
                    out.extend_from_slice(b"true,\"nextCursor\":");
                    write_json(&self.source.cursor(last), &mut out)?;
                }
                _ => out.extend_from_slice(b"false"),
            }
            out.push(b'}');
            self.closed = true;
        }
        Ok(out)
    }

    async fn next(mut self) -> Option<(Result<Bytes, io::Error>, Self)> {
        if self.closed {
            return None;
        }
        if self.opened
            && let Err(e) = self.read().await
        {
            tracing::error!(error = %e, "a paged answer could not read its next page");
            self.closed = true;
            return Some((Err(io::Error::other(e.to_string())), self));
        }
        match self.chunk() {
            Ok(chunk) => {
                let chunk = self.budget.charge(chunk).await;
                Some((Ok(chunk), self))
            }
            Err(e) => {
                tracing::error!(error = %e, "a paged answer could not be written");
                self.closed = true;
                Some((Err(io::Error::other(e)), self))
            }
        }
    }
}

/// The `200` answer of `source`: at most `limit` items (all when `None`), read `page` at a
/// time. The first page is read here, so its failure is the caller's error.
pub(crate) async fn answer<S: PageSource>(
    source: S,
    page: u32,
    limit: Option<usize>,
    budget: BodyBudget,
) -> Result<Response, RuntimeError> {
    let mut paged = Paged {
        source,
        budget,
        page: page.max(1),
        limit,
        sent: 0,
        ready: Vec::new(),
        last: None,
        exhausted: false,
        more: false,
        opened: false,
        closed: false,
    };
    paged.read().await?;
    let body = Body::from_stream(futures::stream::unfold(paged, Paged::next));
    let mut response = Response::new(body);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Ok(response)
}
