use clap::Parser;

use xlaref::cli::EXIT_INTERNAL;

/// Large freed blocks are kept for reuse (src/block_cache.rs).
#[global_allocator]
static ALLOCATOR: xlaref::block_cache::BlockCache = xlaref::block_cache::BlockCache::new();

fn main() {
    let cli = xlaref::cli::Cli::parse();
    // Before anything uses rayon: the fast engine runs programs on the
    // pool only if it built the pool itself.
    xlaref_fast::init_pool();
    // Bad input is always an error value, never a panic; should a bug panic
    // anyway, say so plainly instead of printing a backtrace.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("internal error (a bug in xlaref, please report it with the input): {info}");
    }));
    match std::panic::catch_unwind(|| xlaref::cli::main_with(cli)) {
        Ok(code) => std::process::exit(code),
        Err(_) => std::process::exit(EXIT_INTERNAL),
    }
}
