//! A model registered with `sampling: false` (`ProviderModel.sampling`): its API rejects a
//! non-default temperature, so a call goes without one and the answer's warnings say so
//! (`sampling-unsupported`), as the contract has it. [`adapters::connect`](super::adapters::connect)
//! wraps such a model's client in [`WithoutSampling`].

use async_trait::async_trait;
use std::sync::Arc;

use super::{ModelError, ModelProvider, ModelRequest, ModelResponse, TextSink};

/// The warning code of a call whose temperature was left out.
pub const WARNING_CODE: &str = "sampling-unsupported";
/// Its words.
pub const WARNING: &str = "This model takes no sampling settings (its registration says `sampling: false`), so the call went without its temperature.";

/// A client that sends no `temperature` and says so when the request had one.
#[derive(Debug)]
pub struct WithoutSampling(pub Arc<dyn ModelProvider>);

/// The request without its temperature, and whether it had one.
fn strip(mut request: ModelRequest) -> (ModelRequest, bool) {
    let had = request.temperature.take().is_some();
    (request, had)
}

fn warned(mut answer: ModelResponse, had: bool) -> ModelResponse {
    if had && !answer.warnings.iter().any(|w| w == WARNING_CODE) {
        answer.warnings.push(WARNING_CODE.to_owned());
    }
    answer
}

#[async_trait]
impl ModelProvider for WithoutSampling {
    fn provider_id(&self) -> &str {
        self.0.provider_id()
    }

    fn model(&self) -> &str {
        self.0.model()
    }

    async fn invoke(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let (request, had) = strip(request);
        Ok(warned(self.0.invoke(request).await?, had))
    }

    async fn invoke_streaming(
        &self,
        request: ModelRequest,
        on_text: &TextSink,
    ) -> Result<ModelResponse, ModelError> {
        let (request, had) = strip(request);
        Ok(warned(
            self.0.invoke_streaming(request, on_text).await?,
            had,
        ))
    }
}
