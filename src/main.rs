use clap::Parser;

fn main() {
    let cli = xlaref::cli::Cli::parse();
    std::process::exit(xlaref::cli::main_with(cli));
}
