//! Hostile inputs, each run as a subprocess under a time limit and an
//! address-space cap: every one must end with exit status 2 and a message
//! saying what was wrong, never a panic, an abort, a hang or a memory blow-up.

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `xlaref ARGS` with `stdin` as input, at most 20 s and 4 GiB of
/// address space.
fn run(args: &[&str], env: &[(&str, &str)], stdin: &[u8]) -> Output {
    let mut line = String::from("ulimit -v 4194304; exec \"$0\"");
    for i in 0..args.len() {
        line.push_str(&format!(" \"${}\"", i + 1));
    }
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(line).arg(env!("CARGO_BIN_EXE_xlaref")).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("xlaref starts");
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let start = Instant::now();
    loop {
        if child.try_wait().ok().flatten().is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("xlaref {args:?} ran past 20 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = writer.join();
    child.wait_with_output().expect("output")
}

/// Exit status 2, and stderr holds `says` (and no panic).
fn refused(out: &Output, says: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(says), "expected `{says}` in: {stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("internal error"), "{stderr}");
}

#[test]
fn non_finite_seconds_are_refused_at_parsing() {
    for flag in ["nan", "NaN", "-nan", "inf", "-1"] {
        let (timeout, seconds, start) = (format!("--timeout={flag}"), format!("--seconds={flag}"), format!("--start-timeout={flag}"));
        refused(&run(&["eval", "-", &timeout], &[], b""), "is not a number of seconds");
        refused(&run(&["fuzz", &seconds], &[], b""), "is not a number of seconds");
        refused(&run(&["conform", "--backend", "engine:fast", "--generate", "1", &start], &[], b""), "is not a number of seconds");
    }
}

#[test]
fn endless_and_oversized_inputs_are_cut_off() {
    let cap = [("XLAREF_MAX_INPUT_BYTES", "4096")];
    refused(&run(&["eval", "/dev/zero"], &cap, b""), "over the input limit of 4096 bytes");
    refused(&run(&["import", "/dev/zero"], &cap, b""), "over the input limit");
    refused(&run(&["verify", "-"], &cap, &vec![b' '; 10_000]), "over the input limit");
    refused(&run(&["eval", "/dev/urandom"], &cap, b""), "over the input limit");
    refused(&run(&["eval", "/tmp"], &[], b""), "it is a directory");
}

#[test]
fn the_module_may_come_from_standard_input() {
    let module = br#"{"format": "xla-json/1", "computations": {"main": {"params": [{"name": "x", "shape": "f32[2]"}],
        "instructions": [{"name": "n", "op": "Neg", "operands": ["x"]}]}}}"#;
    let out = run(&["eval", "-", "--arg", "f32[2]=[1,-2]"], &[], module);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), r#"{"shape":"f32[2]","value":[-1.0,2.0]}"#);
    // A bounded shape on the command line: the `=` of `<=` is not the SHAPE=VALUE one.
    let bounded = br#"{"format": "xla-json/1", "computations": {"main": {"params": [{"name": "x", "shape": "f32[<=5]"}],
        "instructions": [{"name": "n", "op": "Neg", "operands": ["x"]}]}}}"#;
    let out = run(&["eval", "-", "--arg", "f32[<=5]=[1,2]"], &[], bounded);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        r#"{"shape":"f32[<=5]","value":[-1.0,-2.0]}"#,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn ambiguous_hlo_modules_are_refused() {
    let two_entries = b"HloModule m\nENTRY a {\n ROOT p = f32[] parameter(0)\n}\nENTRY b {\n ROOT p = f32[] parameter(0)\n}\n";
    refused(&run(&["verify", "-"], &[], two_entries), "a second ENTRY computation");
    let same_name = b"HloModule m\nc {\n ROOT p = f32[] parameter(0)\n}\nc {\n ROOT p = f32[] parameter(0)\n}\nENTRY e {\n ROOT p = f32[] parameter(0)\n}\n";
    refused(&run(&["verify", "-"], &[], same_name), "a second computation named `c`");
}

#[test]
fn a_folder_without_cases_is_an_error() {
    let dir = std::env::temp_dir().join(format!("xlaref-hostile-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    refused(&run(&["check", &dir.display().to_string()], &[], b""), "no cases found");
}

#[test]
fn control_characters_from_the_input_are_escaped_and_long_input_cut() {
    let module = "{\"format\": \"xla-json/1\", \"computations\": {\"main\": {\"params\": [], \"instructions\": [{\"name\": \"n\", \"op\": \"Neg\", \"operands\": [\"\\u001b[2J\"]}]}}}";
    let out = run(&["verify", "-"], &[], module.as_bytes());
    refused(&out, "\\u{1b}[2J");
    assert!(!out.stderr.contains(&0x1b), "a raw ESC reached the terminal");
    let huge = format!("f32[1]={}", "1,".repeat(60_000));
    let neg = br#"{"format": "xla-json/1", "computations": {"main": {"params": [{"name": "x", "shape": "f32[1]"}],
        "instructions": [{"name": "n", "op": "Neg", "operands": ["x"]}]}}}"#;
    let out = run(&["eval", "-", "--arg", &huge], &[], neg);
    refused(&out, "more bytes)");
    assert!(out.stderr.len() < 4000, "{} bytes of error", out.stderr.len());
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let n = 100_000;
    let tuple = format!("HloModule m\nENTRY e {{\n  ROOT p = {}f32[]{} parameter(0)\n}}\n", "(".repeat(n), ")".repeat(n));
    let constant = format!("HloModule m\nENTRY e {{\n  ROOT c = f32[1] constant({}1{})\n}}\n", "{".repeat(n), "}".repeat(n));
    for text in [&tuple, &constant] {
        for cmd in ["verify", "eval", "import"] {
            refused(&run(&[cmd, "-"], &[], text.as_bytes()), "nested deeper than 200");
        }
    }
    // The same module as a case's module string.
    let case = serde_json::json!({"format": "xla-json/1", "name": "deep", "module": constant, "args": [], "expected": {"shape": "f32[1]", "value": [1]}});
    let dir = std::env::temp_dir().join(format!("xlaref-hostile-deep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("deep.json"), case.to_string()).expect("write");
    let out = run(&["check", &dir.display().to_string()], &[], b"");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("nested deeper than 200"), "{stdout}");
}

#[test]
fn devices_and_link_loops_are_read_once() {
    let out = run(&["check", "/dev/zero"], &[("XLAREF_MAX_INPUT_BYTES", "4096")], b"");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("over the input limit"), "{stdout}");
    // A directory holding a link to itself: its cases count once.
    let dir = std::env::temp_dir().join(format!("xlaref-hostile-loop-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).expect("dir");
    let case = br#"{"format": "xla-json/1", "name": "neg", "module": {"format": "xla-json/1", "computations": {"main": {
        "params": [{"name": "x", "shape": "f32[]"}], "instructions": [{"name": "n", "op": "Neg", "operands": ["x"]}]}}},
        "args": [{"shape": "f32[]", "value": 1}], "expected": {"shape": "f32[]", "value": -1}}"#;
    std::fs::write(dir.join("sub/neg.json"), case).expect("write");
    let _ = std::os::unix::fs::symlink(&dir, dir.join("sub/back"));
    let out = run(&["check", &dir.display().to_string()], &[], b"");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1 passed, 0 failed, 0 skipped");
}

#[test]
fn a_named_pipe_nobody_writes_to_is_an_error_not_a_hang() {
    let fifo = std::env::temp_dir().join(format!("xlaref-hostile-fifo-{}", std::process::id()));
    let path = fifo.display().to_string();
    let made = Command::new("mkfifo").arg(&path).status().expect("mkfifo runs");
    assert!(made.success());
    let started = Instant::now();
    refused(&run(&["eval", &path], &[], b""), "no writer sent anything to the named pipe");
    assert!(started.elapsed() < Duration::from_secs(15));
    // With a writer, a named pipe is read as any file.
    let writer = {
        let path = path.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            std::fs::write(path, "HloModule m\nENTRY e {\n  ROOT c = f32[] constant(7)\n}\n").expect("write to the pipe");
        })
    };
    let out = run(&["eval", &path], &[], b"");
    writer.join().expect("writer");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), r#"{"shape":"f32[]","value":7.0}"#);
    let _ = std::fs::remove_file(&fifo);
}

#[test]
fn the_time_limit_message_states_the_limit() {
    let endless = br#"{"format": "xla-json/1", "computations": {
        "c": {"params": [{"name": "x", "shape": "s32[]"}], "instructions": [{"name": "t", "op": "Constant", "shape": "pred[]", "literal": true}]},
        "b": {"params": [{"name": "x", "shape": "s32[]"}], "instructions": [{"name": "y", "op": "Add", "operands": ["x", "x"]}]},
        "main": {"params": [{"name": "x", "shape": "s32[]"}], "instructions": [{"name": "w", "op": "While", "operands": ["x"], "condition": "c", "body": "b"}]}}}"#;
    let out = run(&["eval", "-", "--arg", "s32[]=1", "--timeout", "0.5", "--max-while-trips", "100000000000"], &[], endless);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("time limit of 0.5 s (--timeout)"), "{stderr}");
    // A missing op is said to be missing.
    let no_op = br#"{"format": "xla-json/1", "computations": {"main": {"params": [], "instructions": [{"name": "n"}]}}}"#;
    refused(&run(&["verify", "-"], &[], no_op), "`op` is missing");
}

/// One op that runs for minutes unless the deadline is checked inside its
/// kernel: each must stop within a few seconds of `--timeout 1` on both
/// engines (or, on the fast engine, finish inside the limit).
#[test]
fn long_kernels_stop_at_the_time_limit() {
    let dot = "HloModule m\nENTRY e {\n  a = f32[4096,4096] iota(), iota_dimension=0\n  \
               ROOT d = f32[4096,4096] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
    let fft = "HloModule m\nENTRY e {\n  a = f32[65536] iota(), iota_dimension=0\n  c = c64[65536] convert(a)\n  \
               ROOT d = c64[65536] fft(c), fft_type=FFT, fft_length={65536}\n}\n";
    let sort = "HloModule m\ncmp {\n  p0 = f32[] parameter(0)\n  p1 = f32[] parameter(1)\n  n0 = f32[] negate(p0)\n  \
                n1 = f32[] negate(p1)\n  ROOT lt = pred[] compare(n0, n1), direction=LT\n}\nENTRY e {\n  \
                a = f32[4194304] iota(), iota_dimension=0\n  ROOT s = f32[4194304] sort(a), dimensions={0}, to_apply=cmp\n}\n";
    let conv =
        "HloModule m\nENTRY e {\n  a = f32[8,256,256,64] iota(), iota_dimension=3\n  w = f32[5,5,64,64] iota(), iota_dimension=2\n  \
                ROOT c = f32[8,256,256,64] convolution(a, w), window={size=5x5 pad=2_2x2_2}, dim_labels=b01f_01io->b01f\n}\n";
    let solve = "HloModule m\nENTRY e {\n  a = f32[4096,4096] iota(), iota_dimension=0\n  one = f32[] constant(1)\n  o = f32[4096,4096] broadcast(one), dimensions={}\n  \
                 d = f32[4096,4096] add(a, o)\n  ROOT x = f32[4096,4096] triangular-solve(d, d), left_side=true, lower=true, \
                 transpose_a=NO_TRANSPOSE\n}\n";
    for (name, module) in [("dot", dot), ("fft", fft), ("sort", sort), ("conv", conv), ("solve", solve)] {
        for engine in ["reference", "fast"] {
            let start = Instant::now();
            let out = run(&["eval", "-", "--engine", engine, "--timeout", "1", "-o", "/dev/null"], &[], module.as_bytes());
            let took = start.elapsed();
            let stderr = String::from_utf8_lossy(&out.stderr);
            let stopped = out.status.code() == Some(1) && stderr.contains("time limit of 1 s");
            assert!(stopped || (engine == "fast" && out.status.success()), "{name} on {engine}: {:?} {stderr}", out.status);
            assert!(took < Duration::from_secs(8), "{name} on {engine} took {took:?} with --timeout 1");
        }
    }
}

/// Values that would not fit in memory are refused before they are made
/// (`--max-bytes`), counting every live value of every replica.
#[test]
fn the_byte_budget_holds_before_every_op() {
    let c128 = "HloModule m\nENTRY e {\n  a = c128[268435456] iota(), iota_dimension=0\n  b = c128[268435456] iota(), iota_dimension=0\n  \
                ROOT s = c128[268435456] add(a, b)\n}\n";
    for engine in ["reference", "fast"] {
        let out = run(&["eval", "-", "--engine", engine, "--max-bytes", "2G"], &[], c128.as_bytes());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("over its memory budget of 2.0 GiB (--max-bytes)"), "{stderr}");
    }
    // Raised element limits do not lift the byte budget: 2^40 f32 is 4 TiB.
    let huge = "HloModule m\nENTRY e {\n  a = f32[1099511627776] iota(), iota_dimension=0\n  ROOT s = f32[1] slice(a), slice={[5:6]}\n}\n";
    let out = run(&["eval", "-", "--max-elements", "2000000000000"], &[], huge.as_bytes());
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs 8.0 TiB more"), "{}", String::from_utf8_lossy(&out.stderr));
    // 64 replicas of 4 MiB values: the budget counts them all.
    let all_reduce = "HloModule m\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\
                      ENTRY e {\n  a = f32[1048576] iota(), iota_dimension=0\n  \
                      ROOT r = f32[1048576] all-reduce(a), replica_groups={}, to_apply=add\n}\n";
    let out = run(&["eval", "-", "--replicas", "64", "--max-bytes", "128M", "-o", "/dev/null"], &[], all_reduce.as_bytes());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("memory budget of 128.0 MiB"), "{stderr}");
    refused(&run(&["eval", "-", "--max-bytes", "lots"], &[], b""), "is not a byte count");
}

/// The document's rules the default verifier relaxes for real programs
/// are enforced by `verify --strict`; unknown precisions are always errors.
#[test]
fn strict_verification_rejects_the_extensions() {
    let cholesky = "HloModule m\nENTRY e {\n  a = f32[3,3] parameter(0)\n  ROOT c = f32[3,3] cholesky(a), lower=true\n}\n";
    let philox = "HloModule m\nENTRY e {\n  s = u64[2] parameter(0)\n  \
                  ROOT r = (u64[2], u32[4]) rng-bit-generator(s), algorithm=rng_philox\n}\n";
    for module in [cholesky, philox] {
        let out = run(&["verify", "-"], &[], module.as_bytes());
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        refused(&run(&["verify", "-", "--strict"], &[], module.as_bytes()), "rejected by --strict");
    }
    let precision = br#"{"format": "xla-json/1", "computations": {"main": {"params": [{"name": "x", "shape": "f32[2,2]"}],
        "instructions": [{"name": "d", "op": "Dot", "operands": ["x", "x"], "precision_config": ["HIGHEST", "FASTEST"]}]}}}"#;
    refused(&run(&["verify", "-"], &[], precision), "unknown precision \"FASTEST\"; expected DEFAULT, HIGH or HIGHEST");
    let fine = br#"{"format": "xla-json/1", "computations": {"main": {"params": [{"name": "x", "shape": "f32[2,2]"}],
        "instructions": [{"name": "d", "op": "Dot", "operands": ["x", "x"], "precision_config": ["highest", "DEFAULT"]}]}}}"#;
    assert!(run(&["verify", "-"], &[], fine).status.success());
}

/// A report whose reader goes away (`xlaref bench | head -1`) ends quietly
/// with status 0, not as an internal error (status 70, from `println!`'s
/// panic); a stdout that cannot be written for another reason is status 74.
#[test]
fn a_closed_stdout_ends_a_report_quietly() {
    let xlaref = env!("CARGO_BIN_EXE_xlaref");
    let args = "bench --quick --ops dot,add --no-reference";
    // POSIX sh has no PIPESTATUS: the status goes through a file.
    let dir = std::env::temp_dir().join(format!("xlaref-closed-stdout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let status_file = dir.join("status");
    let err_file = dir.join("stderr");
    let line =
        format!("(\"{xlaref}\" {args} 2> \"{}\"; echo $? > \"{}\") | head -c 1 > /dev/null", err_file.display(), status_file.display());
    Command::new("sh").arg("-c").arg(line).status().expect("sh runs");
    let status = std::fs::read_to_string(&status_file).expect("status written");
    let stderr = std::fs::read_to_string(&err_file).unwrap_or_default();
    assert_eq!(status.trim(), "0", "stderr: {stderr}");
    assert!(!stderr.contains("internal error"), "{stderr}");
    let full = Command::new(xlaref)
        .args(args.split(' '))
        .stdout(std::fs::File::options().write(true).open("/dev/full").expect("/dev/full opens"))
        .output()
        .expect("xlaref runs");
    assert_eq!(full.status.code(), Some(74), "{}", String::from_utf8_lossy(&full.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}
