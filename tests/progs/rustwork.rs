// A Rust program for the names of its frames: rustwork::outer::top ->
// rustwork::middle -> rustwork::leaf, burning the CPU milliseconds given (the
// process's CPU time, from the C library's clock()).  Built twice by
// build.sh: with rustc's default (legacy) mangling and with v0.
extern "C" {
    fn clock() -> i64;
}

fn cpu_ms() -> i64 {
    unsafe { clock() / 1000 }
}

#[inline(never)]
fn leaf(n: u64) -> u64 {
    let mut x = n;
    for i in 0..2000u64 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
    }
    x
}

#[inline(never)]
fn middle(n: u64) -> u64 {
    leaf(n) ^ leaf(n + 1)
}

mod outer {
    #[inline(never)]
    pub fn top(n: u64) -> u64 {
        super::middle(n).rotate_left(3)
    }
}

fn main() {
    let ms: i64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(300);
    let (mut s, mut i) = (0u64, 0u64);
    while cpu_ms() < ms {
        s ^= outer::top(i);
        i += 1;
    }
    println!("{}", s & 1);
}
