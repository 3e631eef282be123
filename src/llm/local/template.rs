//! Chat templates: the model's own turn markup for one system and one user message.
//!
//! Two formats cover the supported models: ChatML (`<|im_start|>role\n…<|im_end|>`; SmolLM2,
//! Qwen 2) and Llama 3's headers (`<|start_header_id|>role<|end_header_id|>\n\n…<|eot_id|>`).
//! The format is read from the GGUF's `tokenizer.chat_template` when present, then guessed from
//! the vocabulary, and ChatML otherwise. We render the two formats ourselves rather than run the
//! Jinja template: the prompts only ever hold one system and one user message.
//!
//! Markers are inserted as token ids, never parsed out of text, and message text is encoded
//! with special-token text neutralised, so a respondent cannot close the model's turn.

use super::LocalError;
use super::tokenizer::TextTokenizer;

/// Which markup the model was trained on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TemplateKind {
    ChatMl,
    Llama3,
}

impl TemplateKind {
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::ChatMl => "ChatML",
            Self::Llama3 => "Llama 3",
        }
    }
}

/// A prompt as token ids, and where the user message's text starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Rendered {
    pub(super) tokens: Vec<u32>,
    /// Index of the first token of the user message's text: everything before it (system block
    /// and user header) repeats across calls with the same system prompt.
    pub(super) user_start: usize,
}

/// A chat template bound to one tokenizer.
#[derive(Debug, Clone)]
pub(super) struct ChatTemplate {
    kind: TemplateKind,
    /// System prompt the model's own template inserts when a conversation has none (SmolLM2:
    /// "You are a helpful AI assistant named `SmolLM`…").
    default_system: Option<String>,
    /// BOS to put first, when the model expects one and the markup does not start with it.
    bos: Option<u32>,
    /// Tokens that end the reply.
    stops: Vec<u32>,
}

impl ChatTemplate {
    /// Picks the template for a model from its Jinja chat template (when the GGUF has one) and
    /// vocabulary. `add_bos` and `eos` come from the GGUF metadata.
    pub(super) fn detect(
        jinja: Option<&str>,
        tokenizer: &TextTokenizer,
        add_bos: bool,
        bos: Option<u32>,
        eos: Option<u32>,
    ) -> Self {
        let has = |token: &str| tokenizer.token_id(token).is_some();
        let kind = match jinja {
            Some(t) if t.contains("<|start_header_id|>") => TemplateKind::Llama3,
            Some(t) if t.contains("<|im_start|>") => TemplateKind::ChatMl,
            _ if has("<|start_header_id|>") && has("<|eot_id|>") => TemplateKind::Llama3,
            _ => TemplateKind::ChatMl,
        };
        let stop_names: &[&str] = match kind {
            TemplateKind::ChatMl => &["<|im_end|>", "<|endoftext|>"],
            TemplateKind::Llama3 => &["<|eot_id|>", "<|end_of_text|>", "<|eom_id|>"],
        };
        let mut stops: Vec<u32> = stop_names
            .iter()
            .filter_map(|name| tokenizer.token_id(name))
            .collect();
        if let Some(eos) = eos
            && !stops.contains(&eos)
        {
            stops.push(eos);
        }
        let bos = match kind {
            TemplateKind::Llama3 => tokenizer.token_id("<|begin_of_text|>").or(bos),
            TemplateKind::ChatMl => bos.filter(|_| add_bos),
        };
        let default_system = match kind {
            TemplateKind::ChatMl => jinja.and_then(chatml_default_system),
            TemplateKind::Llama3 => None,
        };
        Self {
            kind,
            default_system,
            bos,
            stops,
        }
    }

    pub(super) fn kind(&self) -> TemplateKind {
        self.kind
    }

    /// Token ids that end the model's turn.
    pub(super) fn stops(&self) -> &[u32] {
        &self.stops
    }

    /// The token that ends the turn in this markup (the constrained decoder's "end").
    pub(super) fn end_of_turn(&self) -> Option<u32> {
        self.stops.first().copied()
    }

    /// The prompt for one system and one user message, ending where the assistant speaks.
    pub(super) fn render(
        &self,
        tokenizer: &TextTokenizer,
        system: &str,
        user: &str,
    ) -> Result<Rendered, LocalError> {
        let system = if system.trim().is_empty() {
            self.default_system.as_deref().unwrap_or_default()
        } else {
            system
        };
        let mut out = Builder {
            tokenizer,
            tokens: Vec::with_capacity(256),
        };
        if let Some(bos) = self.bos {
            out.tokens.push(bos);
        }
        let user_start = match self.kind {
            TemplateKind::ChatMl => {
                if !system.is_empty() {
                    out.marker("<|im_start|>")?;
                    out.text("system\n")?;
                    out.content(system)?;
                    out.marker("<|im_end|>")?;
                    out.text("\n")?;
                }
                out.marker("<|im_start|>")?;
                out.text("user\n")?;
                let start = out.tokens.len();
                out.content(user)?;
                out.marker("<|im_end|>")?;
                out.text("\n")?;
                out.marker("<|im_start|>")?;
                out.text("assistant\n")?;
                start
            }
            TemplateKind::Llama3 => {
                if !system.is_empty() {
                    out.header("system")?;
                    out.content(system)?;
                    out.marker("<|eot_id|>")?;
                }
                out.header("user")?;
                let start = out.tokens.len();
                out.content(user)?;
                out.marker("<|eot_id|>")?;
                out.header("assistant")?;
                start
            }
        };
        Ok(Rendered {
            tokens: out.tokens,
            user_start,
        })
    }
}

struct Builder<'a> {
    tokenizer: &'a TextTokenizer,
    tokens: Vec<u32>,
}

impl Builder<'_> {
    /// A markup token: its id, or its text when the vocabulary lacks it.
    fn marker(&mut self, name: &str) -> Result<(), LocalError> {
        match self.tokenizer.token_id(name) {
            Some(id) => self.tokens.push(id),
            None => self.tokens.extend(self.tokenizer.encode(name)?),
        }
        Ok(())
    }

    /// Fixed markup text (role names, newlines).
    fn text(&mut self, text: &str) -> Result<(), LocalError> {
        self.tokens.extend(self.tokenizer.encode(text)?);
        Ok(())
    }

    /// Message text from a prompt: special-token text neutralised by the tokenizer.
    fn content(&mut self, text: &str) -> Result<(), LocalError> {
        self.tokens.extend(self.tokenizer.encode(text)?);
        Ok(())
    }

    fn header(&mut self, role: &str) -> Result<(), LocalError> {
        self.marker("<|start_header_id|>")?;
        self.text(role)?;
        self.marker("<|end_header_id|>")?;
        self.text("\n\n")
    }
}

/// The literal system prompt a ChatML Jinja template inserts when the conversation has none:
/// the text after `<|im_start|>system\n` up to the next `<|im_end|>`, when that text is a
/// literal (no `{{`).
fn chatml_default_system(jinja: &str) -> Option<String> {
    let start = jinja.find("<|im_start|>system\n")? + "<|im_start|>system\n".len();
    let rest = jinja.get(start..)?;
    let end = rest.find("<|im_end|>")?;
    let text = rest.get(..end)?;
    (!text.contains("{{") && !text.contains("{%") && !text.contains('\'') && !text.is_empty())
        .then(|| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smollm_default_system_prompt_is_read_from_the_jinja_template() {
        let jinja = "{% for message in messages %}{% if loop.first and messages[0]['role'] != \
                     'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant named \
                     SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' \
                     + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}\
                     {% endfor %}";
        assert_eq!(
            chatml_default_system(jinja).as_deref(),
            Some("You are a helpful AI assistant named SmolLM, trained by Hugging Face")
        );
        assert_eq!(
            chatml_default_system("{{'<|im_start|>system\n' + message['content'] + '<|im_end|>'}}"),
            None
        );
    }
}
