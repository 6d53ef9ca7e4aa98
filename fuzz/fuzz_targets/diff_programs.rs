//! Structured input → a valid random program → both engines agree under
//! the tolerance model. The first two bytes pick the generator, the rest
//! seed the program's random stream (the same stream `xlaref fuzz` draws
//! from), so libFuzzer's mutations explore generators and programs, and a
//! crash input replays as `xlaref fuzz --ops OP --seed S`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use xlaref::gen::{self, Program};
use xlaref::harness::campaign::{run_one, Outcome};
use xlaref::harness::engine::Fast;

type Generators = Vec<(&'static str, proptest::strategy::BoxedStrategy<Program>)>;

thread_local! {
    // Strategies are not Sync; libFuzzer runs the target on one thread.
    static ALL: Generators = gen::generators();
}

fuzz_target!(|data: &[u8]| ALL.with(|all| check(all, data)));

fn check(all: &Generators, data: &[u8]) {
    let (pick, rest) = match data {
        [a, b, rest @ ..] => (u16::from_le_bytes([*a, *b]) as usize, rest),
        _ => return,
    };
    let (op, strategy) = &all[pick % all.len()];
    let mut seed = [0u8; 8];
    for (i, b) in rest.iter().take(16).enumerate() {
        seed[i % 8] ^= b.rotate_left(i as u32);
    }
    let seed = u64::from_le_bytes(seed);
    match run_one(op, strategy, seed, 0, &Fast) {
        Outcome::Agree => {}
        Outcome::Invalid(e) => panic!("generator bug: {e}"),
        Outcome::Failure(f) => panic!(
            "{op}: engines disagree (xlaref fuzz --ops {op} --seed {seed}): {}\n{}",
            f.summary,
            serde_json::to_string(&f.case).unwrap_or_default()
        ),
    }
}
