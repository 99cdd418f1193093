//! Fast zstd estimates the run makes before it chooses what to do: whether a
//! large source shrinks at all (level 1, as the scan reads it), and how small
//! a delta against a candidate dictionary would be (level 3), to pick the
//! closest of several. Not outputs: nothing they make is written.

/// zstd level 1 over a source as the scan reads it, counting what it writes.
pub struct ShrinkProbe {
    cctx: zstd::zstd_safe::CCtx<'static>,
    out: Vec<u8>,
    written: u64,
}

impl ShrinkProbe {
    /// A probe at zstd level 1; `None` if zstd refuses the level.
    pub fn new() -> Option<ShrinkProbe> {
        let mut cctx = zstd::zstd_safe::CCtx::create();
        cctx.set_parameter(zstd::zstd_safe::CParameter::CompressionLevel(1))
            .ok()?;
        Some(ShrinkProbe {
            cctx,
            out: vec![0; zstd::zstd_safe::CCtx::out_size()],
            written: 0,
        })
    }

    /// The next bytes of the source.
    pub fn feed(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            let mut input = zstd::zstd_safe::InBuffer::around(data);
            let mut output = zstd::zstd_safe::OutBuffer::around(&mut self.out[..]);
            if self.cctx.compress_stream(&mut output, &mut input).is_err() {
                self.written = u64::MAX; // no verdict: treated as compressible
                return;
            }
            self.written = self.written.saturating_add(output.pos() as u64);
            data = &data[input.pos()..];
        }
    }

    /// The bytes the probe wrote for the whole source.
    pub fn finish(mut self) -> u64 {
        if self.written == u64::MAX {
            return 0;
        }
        loop {
            let mut output = zstd::zstd_safe::OutBuffer::around(&mut self.out[..]);
            match self.cctx.end_stream(&mut output) {
                Ok(left) => {
                    self.written += output.pos() as u64;
                    if left == 0 {
                        return self.written;
                    }
                }
                Err(_) => return 0,
            }
        }
    }
}

/// The size of a fast zstd delta of `input` against `dict`.
pub fn delta_size(input: &[u8], dict: &[u8]) -> usize {
    let mut cctx = zstd::zstd_safe::CCtx::create();
    let mut out = Vec::with_capacity(zstd::zstd_safe::compress_bound(input.len()));
    let ok = cctx
        .set_parameter(zstd::zstd_safe::CParameter::CompressionLevel(3))
        .is_ok()
        && cctx.ref_prefix(dict).is_ok()
        && cctx.compress2(&mut out, input).is_ok();
    if ok {
        out.len()
    } else {
        usize::MAX
    }
}
