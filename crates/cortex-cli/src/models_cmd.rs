//! `cortex models list|path`: the embedded models and where their files are.

use clap::Subcommand;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum ModelsCommand {
    /// The models `--model local:NAME` knows, and whether each is fetched.
    List,
    /// Print the file of a model (exit 1 with how to fetch it when missing).
    Path {
        /// A short name (see `list`), a .gguf file name or a path.
        #[arg(default_value = cortex_model_local::DEFAULT_MODEL)]
        name: String,
    },
}

pub fn run(command: ModelsCommand) -> anyhow::Result<ExitCode> {
    match command {
        ModelsCommand::List => {
            let dir = cortex_model_local::models_dir();
            println!("models folder: {}", dir.display());
            for (name, file) in cortex_model_local::KNOWN_MODELS {
                let fetched = dir.join(file).is_file();
                let default = if *name == cortex_model_local::DEFAULT_MODEL {
                    " (default)"
                } else {
                    ""
                };
                let state = if fetched {
                    "fetched"
                } else {
                    "missing: scripts/fetch-default-model NAME"
                };
                println!("{name:<20} {state:<45} {file}{default}");
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
    }
}
