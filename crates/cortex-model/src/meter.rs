//! Counting tokens and estimating cost across the requests of a session.
//!
//! [`Metered`] wraps any provider and adds each response's usage to a shared
//! [`Meter`] when its stream ends (or is dropped, as on Stop), so a front end
//! can show the totals of a turn without the turn loop knowing about prices.

use crate::metadata::{ModelInfo, TokenCounts};
use crate::{ModelEvent, ModelProvider, ModelRequest, ModelStream};
use futures::StreamExt;
use std::sync::{Arc, Mutex};

/// Totals so far.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MeterTotals {
    /// Responses that reported any usage (a stream dropped before its
    /// usage, or failed without any, is not counted).
    pub requests: u64,
    /// The responses' tokens, summed.
    pub tokens: TokenCounts,
    /// Estimated US dollars; `None` when the model's prices are unknown.
    pub cost_usd: Option<f64>,
}

/// Shared, cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Meter {
    totals: Arc<Mutex<MeterTotals>>,
}

impl Meter {
    /// A snapshot of the totals; zeros if a thread panicked while adding.
    pub fn totals(&self) -> MeterTotals {
        self.totals.lock().map(|t| *t).unwrap_or_default()
    }

    fn add(&self, tokens: TokenCounts, info: Option<&ModelInfo>) {
        let Ok(mut totals) = self.totals.lock() else {
            return;
        };
        let first = totals.requests == 0;
        totals.requests += 1;
        let t = &mut totals.tokens;
        t.input += tokens.input;
        t.output += tokens.output;
        t.cache_read += tokens.cache_read;
        t.cache_write += tokens.cache_write;
        let cost = info.and_then(|i| i.cost(&tokens));
        totals.cost_usd = match (first, totals.cost_usd, cost) {
            (true, _, cost) => cost,
            (false, Some(sum), Some(cost)) => Some(sum + cost),
            // One unpriced response makes the total unknown.
            _ => None,
        };
    }
}

/// A provider whose usage is counted on a [`Meter`].
pub struct Metered {
    inner: Arc<dyn ModelProvider>,
    info: Option<ModelInfo>,
    meter: Meter,
}

impl Metered {
    /// Counts `inner`'s responses on `meter`, priced with `info` only: with
    /// `None` the cost stays unknown even if `inner` knows its prices
    /// (`info()` of the wrapper still falls back on `inner`'s).
    pub fn new(inner: Arc<dyn ModelProvider>, info: Option<ModelInfo>, meter: Meter) -> Self {
        Metered { inner, info, meter }
    }
}

/// One response's usage, added to the meter when dropped.
struct Tally {
    tokens: TokenCounts,
    info: Option<ModelInfo>,
    meter: Meter,
    seen: bool,
}

impl Tally {
    /// Each field takes the last non-zero value (see [`crate::Assembler`]).
    fn push(&mut self, event: &ModelEvent) {
        let keep = |field: &mut u64, value: u64| {
            if value > 0 {
                *field = value;
            }
        };
        match event {
            ModelEvent::Usage {
                input_tokens,
                output_tokens,
            } => {
                keep(&mut self.tokens.input, *input_tokens);
                keep(&mut self.tokens.output, *output_tokens);
            }
            ModelEvent::CacheUsage {
                read_tokens,
                write_tokens,
            } => {
                keep(&mut self.tokens.cache_read, *read_tokens);
                keep(&mut self.tokens.cache_write, *write_tokens);
            }
            _ => return,
        }
        self.seen = true;
    }
}

impl Drop for Tally {
    fn drop(&mut self) {
        if self.seen {
            self.meter.add(self.tokens, self.info.as_ref());
        }
    }
}

impl ModelProvider for Metered {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn info(&self) -> Option<ModelInfo> {
        self.info.or_else(|| self.inner.info())
    }

    fn takes_images(&self) -> bool {
        self.inner.takes_images()
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        let mut inner = self.inner.stream(request);
        let mut tally = Tally {
            tokens: TokenCounts::default(),
            info: self.info,
            meter: self.meter.clone(),
            seen: false,
        };
        Box::pin(async_stream::stream! {
            while let Some(item) = inner.next().await {
                if let Ok(event) = &item {
                    tally.push(event);
                }
                yield item;
            }
            drop(tally);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scripted::ScriptedProvider;

    #[tokio::test]
    async fn counts_every_stream_including_dropped_ones() {
        let script = serde_json::json!({"responses": [
            {"text": "one two three"},
            {"text": "four five"},
        ]});
        let inner: Arc<dyn ModelProvider> =
            Arc::new(ScriptedProvider::from_json(&script.to_string()).expect("script"));
        let meter = Meter::default();
        let info = ModelInfo::built_in("gpt-4o");
        let metered = Metered::new(inner, info, meter.clone());
        let request = ModelRequest {
            model: String::new(),
            system: String::new(),
            messages: vec![],
            tools: vec![],
            tool_choice: Default::default(),
            hints: Default::default(),
        };
        let events: Vec<_> = metered.stream(request.clone()).collect().await;
        let mut usage = TokenCounts::default();
        for event in events.iter().flatten() {
            if let ModelEvent::Usage {
                input_tokens,
                output_tokens,
            } = event
            {
                usage.input = *input_tokens;
                usage.output = *output_tokens;
            }
        }
        assert!(usage.output > 0, "the script reports usage");
        assert_eq!(meter.totals().requests, 1);
        assert_eq!(meter.totals().tokens, usage);
        // A stream dropped (Stop) after its usage, before its end, counts.
        let mut second = metered.stream(request);
        while let Some(item) = second.next().await {
            if matches!(item, Ok(ModelEvent::Usage { .. })) {
                break;
            }
        }
        assert_eq!(meter.totals().requests, 1);
        drop(second);
        let totals = meter.totals();
        assert_eq!(totals.requests, 2);
        let expected = info.and_then(|i| i.cost(&totals.tokens)).expect("priced");
        let cost = totals.cost_usd.expect("priced");
        assert!((cost - expected).abs() < 1e-12);
    }
}
