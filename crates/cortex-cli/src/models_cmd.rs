//! `cortex models list|path|fetch`: the embedded models, where their files
//! are, and downloading them.

use anyhow::bail;
use clap::Subcommand;
use cortex_model_local::fetch::{self, Check, Download, FetchProgress};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum ModelsCommand {
    /// The models `--model local:NAME` knows, and whether each is fetched.
    #[command(after_help = "Example:\n  cortex models list")]
    List,
    /// Print the file of a model (exit 1 with how to fetch it when missing).
    #[command(after_help = "Example:\n  ls -l \"$(cortex models path qwen2.5-coder-1.5b)\"")]
    Path {
        /// A short name (see `list`), a .gguf file name or a path.
        #[arg(default_value = cortex_model_local::DEFAULT_MODEL)]
        name: String,
    },
    /// Download a model from Hugging Face (`HF_ENDPOINT` names a mirror) into
    /// the models folder. Resumes an interrupted download; installs the file
    /// only once it is checked. Offline: `scripts/fetch-default-model NAME`.
    #[command(after_help = "Examples:\n  cortex models fetch qwen2.5-coder-1.5b\n  \
        HF_ENDPOINT=https://hf-mirror.example cortex models fetch qwen2.5-coder-0.5b")]
    Fetch {
        /// A short name (see `list`).
        #[arg(default_value = cortex_model_local::DEFAULT_MODEL)]
        name: String,
        /// Require exactly this sha256 (hex) instead of the size and GGUF
        /// header check.
        #[arg(long, value_name = "HEX")]
        sha256: Option<String>,
    },
}

pub async fn run(command: ModelsCommand) -> anyhow::Result<ExitCode> {
    match command {
        ModelsCommand::List => {
            let dir = cortex_model_local::models_dir();
            println!("models folder: {}", dir.display());
            for model in cortex_model_local::KNOWN_MODELS {
                let fetched = dir.join(model.file).is_file();
                let default = if model.name == cortex_model_local::DEFAULT_MODEL {
                    " (default)"
                } else {
                    ""
                };
                let state = match (fetched, model.hf.is_some()) {
                    (true, _) => "fetched".to_owned(),
                    (false, true) => format!("missing: cortex models fetch {}", model.name),
                    (false, false) => {
                        format!("missing: scripts/fetch-default-model {}", model.name)
                    }
                };
                println!("{:<20} {state:<48} {}{default}", model.name, model.file);
            }
            Ok(ExitCode::SUCCESS)
        }
        ModelsCommand::Path { name } => match cortex_model_local::resolve_model(&name) {
            Ok(path) => {
                println!("{}", path.display());
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => {
                eprintln!("error: {e}");
                Ok(ExitCode::FAILURE)
            }
        },
        ModelsCommand::Fetch { name, sha256 } => fetch_model(&name, sha256).await,
    }
}

async fn fetch_model(name: &str, sha256: Option<String>) -> anyhow::Result<ExitCode> {
    let Some(model) = cortex_model_local::known_model(name) else {
        let names: Vec<&str> = cortex_model_local::KNOWN_MODELS
            .iter()
            .map(|m| m.name)
            .collect();
        bail!("unknown model `{name}` (known: {})", names.join(", "));
    };
    let Some(hf) = model.hf else {
        bail!(
            "no Hugging Face file is known for `{name}`; get it with \
             `scripts/fetch-default-model {name}`"
        );
    };
    if let Some(hex) = &sha256
        && (hex.len() != 64 || !hex.chars().all(|c| c.is_ascii_hexdigit()))
    {
        bail!("--sha256 must be 64 hex digits, got `{hex}`");
    }
    let check = match sha256 {
        Some(hex) => Check::Sha256(hex),
        None => Check::Gguf { size: model.size },
    };
    let dest = cortex_model_local::models_dir().join(model.file);
    if fetch::file_passes(&dest, &check) {
        eprintln!("{name} is already fetched");
        println!("{}", dest.display());
        return Ok(ExitCode::SUCCESS);
    }
    let job = Download {
        name: name.to_owned(),
        url: fetch::hf_url(&fetch::hf_endpoint(), &hf),
        dest,
        check,
    };
    eprintln!("fetching {name} from {}", job.url);
    let client = fetch::client()?;
    let mut progress = Progress::new(name);
    let fetched = fetch::download(&client, &job, &mut progress).await?;
    if fetched.resumed_from > 0 {
        eprintln!(
            "resumed after {} of {} bytes",
            fetched.resumed_from, fetched.size
        );
    }
    if matches!(job.check, Check::Gguf { .. }) {
        // Size and header passed; say whether the bytes are also those of
        // the PyPI build `scripts/fetch-default-model` checks.
        if fetched.sha256 == model.sha256 {
            eprintln!("sha256 {} (same as the PyPI build)", fetched.sha256);
        } else {
            eprintln!(
                "sha256 {} (differs from the PyPI build's {}; size and GGUF header match)",
                fetched.sha256, model.sha256
            );
        }
    } else {
        eprintln!("sha256 {} verified", fetched.sha256);
    }
    println!("{}", fetched.path.display());
    Ok(ExitCode::SUCCESS)
}

/// A progress bar on a terminal; otherwise a plain line every 10 %.
enum Progress {
    Bar(Option<ProgressBar>),
    Lines {
        name: String,
        total: Option<u64>,
        next_tenth: u64,
    },
}

impl Progress {
    fn new(name: &str) -> Progress {
        if std::io::stderr().is_terminal() {
            Progress::Bar(None)
        } else {
            Progress::Lines {
                name: name.to_owned(),
                total: None,
                next_tenth: 1,
            }
        }
    }
}

impl FetchProgress for Progress {
    fn begin(&mut self, total: Option<u64>, done: u64) {
        match self {
            Progress::Bar(bar) => {
                let b = match total {
                    Some(t) => ProgressBar::new(t),
                    None => ProgressBar::no_length(),
                };
                b.set_style(
                    ProgressStyle::with_template(
                        "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
                b.set_position(done);
                *bar = Some(b);
            }
            Progress::Lines {
                name,
                total: t,
                next_tenth,
            } => {
                *t = total;
                if let Some(total) = total.filter(|t| *t > 0) {
                    *next_tenth = done * 10 / total + 1;
                    eprintln!("{name}: {} MB to download", (total - done) / 1_000_000);
                }
            }
        }
    }

    fn advance(&mut self, done: u64) {
        match self {
            Progress::Bar(Some(bar)) => bar.set_position(done),
            Progress::Bar(None) => {}
            Progress::Lines {
                name,
                total,
                next_tenth,
            } => {
                if let Some(total) = total.filter(|t| *t > 0)
                    && done * 10 >= *next_tenth * total
                {
                    *next_tenth = done * 10 / total + 1;
                    eprintln!("{name}: {}% ({done} bytes)", done * 100 / total);
                }
            }
        }
    }

    fn end(&mut self) {
        if let Progress::Bar(Some(bar)) = self {
            bar.finish_and_clear();
        }
    }
}
