//! Convolutions: immediate mode (solution count, solutions, compile, run) and Find,
//! for the three directions, computed by the reference kernels.
//!
//! # The solution catalogue
//!
//! | id | name | algorithm | workspace | deterministic | applies | time (heuristic / after a Find) |
//! |---|---|---|---|---|---|---|
//! | 1 | GEMM | `miopenConvolutionAlgoGEMM` | 4 bytes × elements of x (dx for backward data) | not for backward weights | always | 1.0 / 1.5 ms |
//! | 3 | ImplicitGEMM | `miopenConvolutionAlgoImplicitGEMM` | backward weights: 4 bytes × elements of dw; else 0 | not for backward weights | groups = 1 | 2.0 / 0.75 ms |
//! | 2 | Direct | `miopenConvolutionAlgoDirect` | 0 | yes | always | 3.0 / 0.5 ms |
//!
//! Solutions are listed fastest first. Before a Find of the same problem (direction
//! and every descriptor's contents) the heuristic times apply (GEMM first); after one
//! the "measured" times do (Direct first), so a caller that benchmarks sees a
//! different first choice. With `MIOPEN_CONVOLUTION_ATTRIB_DETERMINISTIC` = 1 only the
//! deterministic solutions are listed. Find considers only solutions whose workspace
//! fits the workspace it is given (as MIOpen's Find does), writes the output, and
//! does not count as compiling: `…Immediate` needs a `…CompileSolution` of the same
//! problem and id first (stricter than MIOpen, which would compile on the fly, so that
//! a caller's plan-time compile is checked). Every run scribbles `0xAB` over the
//! solution's workspace before reading its inputs, as a GPU kernel would use it.

use std::ffi::{c_int, c_void};

use hipdnn_reference::kernels::{ConvParams, conv_dgrad, conv_fprop, conv_wgrad};

use crate::objects::{ConvDesc, ConvGeometry, TensorDesc};
use crate::state::{R, State, bad, miopen_entry, out};
use crate::sys::{
    miopen_fn, miopenConvAlgoPerf_t, miopenConvAlgorithm_t, miopenConvSolution_t,
    miopenConvolutionDescriptor_t, miopenHandle_t, miopenStatus_t, miopenTensorDescriptor_t,
};

/// The byte every run writes over its workspace.
const WORKSPACE_SCRIBBLE: u8 = 0xAB;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    BackwardData,
    BackwardWeights,
}

impl Direction {
    /// The argument names of x, w and y in this direction's calls.
    fn names(self) -> [&'static str; 3] {
        match self {
            Self::Forward => ["xDesc", "wDesc", "yDesc"],
            Self::BackwardData => ["dxDesc", "wDesc", "dyDesc"],
            Self::BackwardWeights => ["xDesc", "dwDesc", "dyDesc"],
        }
    }
}

/// One convolution problem, validated.
#[derive(Debug, Clone)]
struct Problem {
    dir: Direction,
    x: TensorDesc,
    w: TensorDesc,
    y: TensorDesc,
    conv: ConvDesc,
    geometry: ConvGeometry,
}

impl Problem {
    /// Checks `x [N, C, spatial…]`, `w [K, C/groups, filter…]`, `y [N, K, out…]` with
    /// `out = (in + 2·pad − dil·(f − 1) − 1) / stride + 1`, ranks `spatialDim + 2`,
    /// one type.
    fn new(st: &State, dir: Direction, x: usize, w: usize, conv: usize, y: usize) -> R<Self> {
        let [xn, wn, yn] = dir.names();
        let xd = st.objects.tensor(x, xn)?.clone();
        let wd = st.objects.tensor(w, wn)?.clone();
        let yd = st.objects.tensor(y, yn)?.clone();
        let c = st.objects.conv(conv, "convDesc")?.clone();
        let (g, expected) = output_dims(&xd, &wd, &c, [xn, wn])?;
        if yd.rank() != expected.len() {
            return Err(bad(format!(
                "{yn} has rank {} but the convolution has {} spatial dims (rank {} needed)",
                yd.rank(),
                g.pad.len(),
                expected.len()
            )));
        }
        if yd.dtype != xd.dtype {
            return Err(bad(format!(
                "types differ: {xn} {}, {yn} {}",
                xd.dtype, yd.dtype
            )));
        }
        if yd.dims != expected {
            return Err(bad(format!(
                "{yn} has dims {:?} but the convolution of {xn} {:?} with {wn} {:?} gives {expected:?}",
                yd.dims, xd.dims, wd.dims
            )));
        }
        Ok(Self {
            dir,
            x: xd,
            w: wd,
            y: yd,
            conv: c,
            geometry: g,
        })
    }

    /// What identifies the problem for Find results and compiled solutions.
    fn key(&self) -> String {
        format!(
            "{:?}|{}|{}|{}|{}",
            self.dir,
            self.x.render(),
            self.w.render(),
            self.y.render(),
            self.conv.render()
        )
    }

    /// The applicable solutions, fastest first.
    fn solutions(&self, found: bool) -> Vec<Solution> {
        let numel = |t: &TensorDesc| t.dims.iter().product::<usize>();
        let wrw = self.dir == Direction::BackwardWeights;
        let mut all = vec![
            Solution {
                id: 1,
                name: "GEMM",
                algorithm: miopenConvAlgorithm_t::miopenConvolutionAlgoGEMM,
                time: if found { 1.5 } else { 1.0 },
                workspace: 4 * numel(&self.x),
                deterministic: !wrw,
            },
            Solution {
                id: 2,
                name: "Direct",
                algorithm: miopenConvAlgorithm_t::miopenConvolutionAlgoDirect,
                time: if found { 0.5 } else { 3.0 },
                workspace: 0,
                deterministic: true,
            },
        ];
        if self.conv.groups == 1 {
            all.push(Solution {
                id: 3,
                name: "ImplicitGEMM",
                algorithm: miopenConvAlgorithm_t::miopenConvolutionAlgoImplicitGEMM,
                time: if found { 0.75 } else { 2.0 },
                workspace: if wrw { 4 * numel(&self.w) } else { 0 },
                deterministic: !wrw,
            });
        }
        all.retain(|s| s.deterministic || !self.conv.deterministic);
        all.sort_by(|a, b| a.time.total_cmp(&b.time));
        all
    }

    /// Reads the inputs, computes, writes the output. `x`, `w`, `y` are the three
    /// tensors' pointers (one of them the output, by direction).
    fn run(&self, st: &State, x: *mut c_void, w: *mut c_void, y: *mut c_void) -> R<()> {
        let p = params(&self.geometry);
        let [xn, wn, yn] = self.dir.names();
        let (xn, wn, yn) = (
            xn.trim_end_matches("Desc"),
            wn.trim_end_matches("Desc"),
            yn.trim_end_matches("Desc"),
        );
        let reference =
            |e: hipdnn_reference::kernels::ReferenceError| bad(format!("reference: {e}"));
        match self.dir {
            Direction::Forward => {
                st.mem.check_tensor(&self.y, y, yn)?;
                let xt = st.mem.read(&self.x, x, xn)?;
                let wt = st.mem.read(&self.w, w, wn)?;
                let mut yt = self.y.host();
                conv_fprop(&xt, &wt, &mut yt, &p).map_err(reference)?;
                st.mem.write(&self.y, y, &yt, yn)
            }
            Direction::BackwardData => {
                st.mem.check_tensor(&self.x, x, xn)?;
                let dy = st.mem.read(&self.y, y, yn)?;
                let wt = st.mem.read(&self.w, w, wn)?;
                let mut dx = self.x.host();
                conv_dgrad(&dy, &wt, &mut dx, &p).map_err(reference)?;
                st.mem.write(&self.x, x, &dx, xn)
            }
            Direction::BackwardWeights => {
                st.mem.check_tensor(&self.w, w, wn)?;
                let dy = st.mem.read(&self.y, y, yn)?;
                let xt = st.mem.read(&self.x, x, xn)?;
                let mut dw = self.w.host();
                conv_wgrad(&xt, &dy, &mut dw, &p).map_err(reference)?;
                st.mem.write(&self.w, w, &dw, wn)
            }
        }
    }
}

/// Checks `x [N, C, spatial…]` and `w [K, C/groups, filter…]` against the descriptor
/// (initialised, ranks `spatialDim + 2`, one type, channels split into the groups) and
/// gives the output dims `[N, K, out…]`, `out = (in + 2·pad − dil·(f − 1) − 1) / stride + 1`.
pub(crate) fn output_dims(
    xd: &TensorDesc,
    wd: &TensorDesc,
    c: &ConvDesc,
    [xn, wn]: [&str; 2],
) -> R<(ConvGeometry, Vec<usize>)> {
    let g = c
        .geometry
        .clone()
        .ok_or_else(|| bad("convDesc was never initialised (miopenInitConvolutionNdDescriptor)"))?;
    let spatial = g.pad.len();
    for (d, name) in [(xd, xn), (wd, wn)] {
        if d.rank() != spatial + 2 {
            return Err(bad(format!(
                "{name} has rank {} but the convolution has {spatial} spatial dims (rank {} needed)",
                d.rank(),
                spatial + 2
            )));
        }
    }
    if wd.dtype != xd.dtype {
        return Err(bad(format!(
            "types differ: {xn} {}, {wn} {}",
            xd.dtype, wd.dtype
        )));
    }
    let groups = c.groups;
    let (n, channels, k, per_group) = (xd.dims[0], xd.dims[1], wd.dims[0], wd.dims[1]);
    if per_group * groups != channels {
        return Err(bad(format!(
            "{wn} has {per_group} input channels per group but {xn} has {channels} channels in {groups} groups"
        )));
    }
    if k % groups != 0 {
        return Err(bad(format!(
            "{wn} has {k} output channels, not a multiple of {groups} groups"
        )));
    }
    let mut out = vec![n, k];
    for i in 0..spatial {
        let padded = xd.dims[i + 2] + 2 * g.pad[i];
        let reach = g.dilation[i] * (wd.dims[i + 2] - 1) + 1;
        if padded < reach {
            return Err(bad(format!(
                "{wn}: dilated filter extent {reach} exceeds the padded {xn} extent {padded} in spatial dim {i}"
            )));
        }
        out.push((padded - reach) / g.stride[i] + 1);
    }
    Ok((g, out))
}

/// The reference's parameters for a descriptor's geometry (symmetric padding).
pub(crate) fn params(g: &ConvGeometry) -> ConvParams {
    let mut p = ConvParams::new(g.pad.len());
    p.pre_padding = g.pad.clone();
    p.post_padding = g.pad.clone();
    p.stride = g.stride.clone();
    p.dilation = g.dilation.clone();
    p
}

#[derive(Debug, Clone)]
struct Solution {
    id: u64,
    name: &'static str,
    algorithm: miopenConvAlgorithm_t,
    time: f32,
    workspace: usize,
    deterministic: bool,
}

impl Solution {
    fn c(&self) -> miopenConvSolution_t {
        miopenConvSolution_t {
            time: self.time,
            workspace_size: self.workspace,
            solution_id: self.id,
            algorithm: self.algorithm,
        }
    }
}

fn render_solutions(list: &[Solution]) -> String {
    let items: Vec<String> = list
        .iter()
        .map(|s| format!("{}:{}(time={},ws={})", s.id, s.name, s.time, s.workspace))
        .collect();
    format!("[{}]", items.join(", "))
}

/// `handle, <desc>, <desc>, conv, <desc>` in the call's own order.
fn render_problem(
    st: &State,
    handle: miopenHandle_t,
    a: usize,
    b: usize,
    conv: usize,
    c: usize,
) -> String {
    let o = &st.objects;
    format!(
        "{}, {}, {}, {}, {}",
        o.render(handle as usize),
        o.render(a),
        o.render(b),
        o.render(conv),
        o.render(c)
    )
}

fn solution_count(
    st: &mut State,
    dir: Direction,
    handle: miopenHandle_t,
    [x, w, conv, y]: [usize; 4],
    count: *mut usize,
) -> R<String> {
    st.objects.handle(handle as usize)?;
    // SAFETY: MIOpen's contract: `count` is writable when non-null.
    let count = unsafe { out(count, "solutionCount") }?;
    let p = Problem::new(st, dir, x, w, conv, y)?;
    let n = p.solutions(st.found.contains(&p.key())).len();
    *count = n;
    Ok(n.to_string())
}

fn get_solutions(
    st: &mut State,
    dir: Direction,
    handle: miopenHandle_t,
    [x, w, conv, y]: [usize; 4],
    max: usize,
    count: *mut usize,
    solutions: *mut miopenConvSolution_t,
) -> R<String> {
    st.objects.handle(handle as usize)?;
    // SAFETY: MIOpen's contract: `count` is writable when non-null.
    let count = unsafe { out(count, "solutionCount") }?;
    if max > 0 && solutions.is_null() {
        return Err(bad(format!(
            "solutions is null with maxSolutionCount {max}"
        )));
    }
    let p = Problem::new(st, dir, x, w, conv, y)?;
    let mut list = p.solutions(st.found.contains(&p.key()));
    list.truncate(max);
    for (i, s) in list.iter().enumerate() {
        // SAFETY: MIOpen's contract: `solutions` holds `maxSolutionCount` entries,
        // and `i < max`.
        unsafe { solutions.add(i).write(s.c()) };
    }
    *count = list.len();
    Ok(render_solutions(&list))
}

fn listed(p: &Problem, found: bool, id: u64) -> R<Solution> {
    let list = p.solutions(found);
    list.iter().find(|s| s.id == id).cloned().ok_or_else(|| {
        bad(format!(
            "solution {id} is not listed for this problem (listed: {})",
            render_solutions(&list)
        ))
    })
}

fn compile(
    st: &mut State,
    dir: Direction,
    handle: miopenHandle_t,
    [x, w, conv, y]: [usize; 4],
    id: u64,
) -> R<String> {
    st.objects.handle(handle as usize)?;
    let p = Problem::new(st, dir, x, w, conv, y)?;
    let key = p.key();
    listed(&p, st.found.contains(&key), id)?;
    st.compiled.insert((key, id));
    Ok(String::new())
}

/// Checks `workspace` (`size` bytes, null allowed with size 0) against what `needed`.
fn check_workspace(
    st: &State,
    workspace: *mut c_void,
    size: usize,
    needed: usize,
    who: &str,
) -> R<()> {
    if size < needed {
        return Err(bad(format!(
            "workspace of {size} bytes is smaller than the {needed} bytes {who} needs"
        )));
    }
    if size > 0 {
        st.mem.check_bad(workspace, size, "workspace")?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn immediate(
    st: &mut State,
    dir: Direction,
    handle: miopenHandle_t,
    [x, w, conv, y]: [usize; 4],
    [xp, wp, yp]: [*mut c_void; 3],
    workspace: *mut c_void,
    workspace_size: usize,
    id: u64,
) -> R<String> {
    st.objects.handle(handle as usize)?;
    let p = Problem::new(st, dir, x, w, conv, y)?;
    let key = p.key();
    let s = listed(&p, st.found.contains(&key), id)?;
    if !st.compiled.contains(&(key, id)) {
        return Err(bad(format!(
            "solution {id} ({}) was not compiled for this problem (call …CompileSolution first)",
            s.name
        )));
    }
    check_workspace(
        st,
        workspace,
        workspace_size,
        s.workspace,
        &format!("solution {id} ({})", s.name),
    )?;
    st.mem
        .scribble(workspace, s.workspace, WORKSPACE_SCRIBBLE, "workspace")?;
    p.run(st, xp, wp, yp)?;
    Ok(String::new())
}

#[allow(clippy::too_many_arguments)]
fn find(
    st: &mut State,
    dir: Direction,
    handle: miopenHandle_t,
    [x, w, conv, y]: [usize; 4],
    [xp, wp, yp]: [*mut c_void; 3],
    request: c_int,
    returned: *mut c_int,
    results: *mut miopenConvAlgoPerf_t,
    workspace: *mut c_void,
    workspace_size: usize,
) -> R<String> {
    st.objects.handle(handle as usize)?;
    // SAFETY: MIOpen's contract: `returnedAlgoCount` is writable when non-null.
    let returned = unsafe { out(returned, "returnedAlgoCount") }?;
    let request = usize::try_from(request)
        .ok()
        .filter(|&r| r >= 1)
        .ok_or_else(|| bad(format!("requestAlgoCount {request} must be at least 1")))?;
    if results.is_null() {
        return Err(bad("perfResults is null"));
    }
    let p = Problem::new(st, dir, x, w, conv, y)?;
    check_workspace(st, workspace, workspace_size, 0, "Find")?;
    let mut list = p.solutions(true);
    list.retain(|s| s.workspace <= workspace_size);
    let Some(best) = list.first() else {
        return Err(bad(format!(
            "no solution fits a workspace of {workspace_size} bytes"
        )));
    };
    st.mem
        .scribble(workspace, best.workspace, WORKSPACE_SCRIBBLE, "workspace")?;
    p.run(st, xp, wp, yp)?;
    st.found.insert(p.key());
    list.truncate(request);
    for (i, s) in list.iter().enumerate() {
        // SAFETY: MIOpen's contract: `perfResults` holds `requestAlgoCount` entries,
        // and `i < request`.
        unsafe {
            results.add(i).write(miopenConvAlgoPerf_t {
                algo: s.algorithm.0,
                time: s.time,
                memory: s.workspace,
            })
        };
    }
    *returned = list.len() as c_int;
    let items: Vec<String> = list
        .iter()
        .map(|s| format!("{}(time={},mem={})", s.name, s.time, s.workspace))
        .collect();
    Ok(format!("[{}]", items.join(", ")))
}

type T = miopenTensorDescriptor_t;
type C = miopenConvolutionDescriptor_t;

macro_rules! u {
    ($($p:expr),*) => { [$($p as usize),*] };
}

// ---------------------------------------------------------------------------------
// Forward (argument order: w, x, conv, y; Find and Immediate as in miopen.h)
// ---------------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenConvolutionForwardGetSolutionCount(
    handle: miopenHandle_t,
    w_desc: T,
    x_desc: T,
    conv: C,
    y_desc: T,
    count: *mut usize,
) -> miopenStatus_t {
    miopen_entry(
        "miopenConvolutionForwardGetSolutionCount",
        |st| {
            render_problem(
                st,
                handle,
                w_desc as usize,
                x_desc as usize,
                conv as usize,
                y_desc as usize,
            )
        },
        |st| {
            solution_count(
                st,
                Direction::Forward,
                handle,
                u![x_desc, w_desc, conv, y_desc],
                count,
            )
        },
    )
}
const _: miopen_fn::miopenConvolutionForwardGetSolutionCount =
    miopenConvolutionForwardGetSolutionCount;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenConvolutionForwardGetSolution(
    handle: miopenHandle_t,
    w_desc: T,
    x_desc: T,
    conv: C,
    y_desc: T,
    max_count: usize,
    count: *mut usize,
    solutions: *mut miopenConvSolution_t,
) -> miopenStatus_t {
    miopen_entry(
        "miopenConvolutionForwardGetSolution",
        |st| {
            let r = render_problem(
                st,
                handle,
                w_desc as usize,
                x_desc as usize,
                conv as usize,
                y_desc as usize,
            );
            format!("{r}, {max_count}")
        },
        |st| {
            get_solutions(
                st,
                Direction::Forward,
                handle,
                u![x_desc, w_desc, conv, y_desc],
                max_count,
                count,
                solutions,
            )
        },
    )
}
const _: miopen_fn::miopenConvolutionForwardGetSolution = miopenConvolutionForwardGetSolution;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenConvolutionForwardCompileSolution(
    handle: miopenHandle_t,
    w_desc: T,
    x_desc: T,
    conv: C,
    y_desc: T,
    solution_id: u64,
) -> miopenStatus_t {
    miopen_entry(
        "miopenConvolutionForwardCompileSolution",
        |st| {
            let r = render_problem(
                st,
                handle,
                w_desc as usize,
                x_desc as usize,
                conv as usize,
                y_desc as usize,
            );
            format!("{r}, {solution_id}")
        },
        |st| {
            compile(
                st,
                Direction::Forward,
                handle,
                u![x_desc, w_desc, conv, y_desc],
                solution_id,
            )
        },
    )
}
const _: miopen_fn::miopenConvolutionForwardCompileSolution =
    miopenConvolutionForwardCompileSolution;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenConvolutionForwardImmediate(
    handle: miopenHandle_t,
    w_desc: T,
    w: *const c_void,
    x_desc: T,
    x: *const c_void,
    conv: C,
    y_desc: T,
    y: *mut c_void,
    workspace: *mut c_void,
    workspace_size: usize,
    solution_id: u64,
) -> miopenStatus_t {
    miopen_entry(
        "miopenConvolutionForwardImmediate",
        |st| {
            let (o, m) = (&st.objects, &st.mem);
            format!(
                "{}, {}, {}, {}, {}, {}, {}, {}, {}, {workspace_size}, {solution_id}",
                o.render(handle as usize),
                o.render(w_desc as usize),
                m.render(w),
                o.render(x_desc as usize),
                m.render(x),
                o.render(conv as usize),
                o.render(y_desc as usize),
                m.render(y),
                m.render(workspace)
            )
        },
        |st| {
            immediate(
                st,
                Direction::Forward,
                handle,
                u![x_desc, w_desc, conv, y_desc],
                [x.cast_mut(), w.cast_mut(), y],
                workspace,
                workspace_size,
                solution_id,
            )
        },
    )
}
const _: miopen_fn::miopenConvolutionForwardImmediate = miopenConvolutionForwardImmediate;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenFindConvolutionForwardAlgorithm(
    handle: miopenHandle_t,
    x_desc: T,
    x: *const c_void,
    w_desc: T,
    w: *const c_void,
    conv: C,
    y_desc: T,
    y: *mut c_void,
    request_count: c_int,
    returned_count: *mut c_int,
    results: *mut miopenConvAlgoPerf_t,
    workspace: *mut c_void,
    workspace_size: usize,
    exhaustive: bool,
) -> miopenStatus_t {
    miopen_entry(
        "miopenFindConvolutionForwardAlgorithm",
        |st| {
            let (o, m) = (&st.objects, &st.mem);
            format!(
                "{}, {}, {}, {}, {}, {}, {}, {}, {request_count}, {}, {workspace_size}, exhaustive={exhaustive}",
                o.render(handle as usize),
                o.render(x_desc as usize),
                m.render(x),
                o.render(w_desc as usize),
                m.render(w),
                o.render(conv as usize),
                o.render(y_desc as usize),
                m.render(y),
                m.render(workspace)
            )
        },
        |st| {
            find(
                st,
                Direction::Forward,
                handle,
                u![x_desc, w_desc, conv, y_desc],
                [x.cast_mut(), w.cast_mut(), y],
                request_count,
                returned_count,
                results,
                workspace,
                workspace_size,
            )
        },
    )
}
const _: miopen_fn::miopenFindConvolutionForwardAlgorithm = miopenFindConvolutionForwardAlgorithm;

// ---------------------------------------------------------------------------------
// Backward data (argument order: dy, w, conv, dx)
// ---------------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenConvolutionBackwardDataGetSolutionCount(
    handle: miopenHandle_t,
    dy_desc: T,
    w_desc: T,
    conv: C,
    dx_desc: T,
    count: *mut usize,
) -> miopenStatus_t {
    miopen_entry(
        "miopenConvolutionBackwardDataGetSolutionCount",
        |st| {
            render_problem(
                st,
                handle,
                dy_desc as usize,
                w_desc as usize,
                conv as usize,
                dx_desc as usize,
            )
        },
        |st| {
            solution_count(
                st,
                Direction::BackwardData,
                handle,
                u![dx_desc, w_desc, conv, dy_desc],
                count,
            )
        },
    )
}
const _: miopen_fn::miopenConvolutionBackwardDataGetSolutionCount =
    miopenConvolutionBackwardDataGetSolutionCount;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenConvolutionBackwardDataGetSolution(
    handle: miopenHandle_t,
    dy_desc: T,
    w_desc: T,
    conv: C,
    dx_desc: T,
    max_count: usize,
    count: *mut usize,
    solutions: *mut miopenConvSolution_t,
) -> miopenStatus_t {
    miopen_entry(
        "miopenConvolutionBackwardDataGetSolution",
        |st| {
            let r = render_problem(
                st,
                handle,
                dy_desc as usize,
                w_desc as usize,
                conv as usize,
                dx_desc as usize,
            );
            format!("{r}, {max_count}")
        },
        |st| {
            get_solutions(
                st,
                Direction::BackwardData,
                handle,
                u![dx_desc, w_desc, conv, dy_desc],
                max_count,
                count,
                solutions,
            )
        },
    )
}
const _: miopen_fn::miopenConvolutionBackwardDataGetSolution =
    miopenConvolutionBackwardDataGetSolution;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenConvolutionBackwardDataCompileSolution(
    handle: miopenHandle_t,
    dy_desc: T,
    w_desc: T,
    conv: C,
    dx_desc: T,
    solution_id: u64,
) -> miopenStatus_t {
    miopen_entry(
        "miopenConvolutionBackwardDataCompileSolution",
        |st| {
            let r = render_problem(
                st,
                handle,
                dy_desc as usize,
                w_desc as usize,
                conv as usize,
                dx_desc as usize,
            );
            format!("{r}, {solution_id}")
        },
        |st| {
            compile(
                st,
                Direction::BackwardData,
                handle,
                u![dx_desc, w_desc, conv, dy_desc],
                solution_id,
            )
        },
    )
}
const _: miopen_fn::miopenConvolutionBackwardDataCompileSolution =
    miopenConvolutionBackwardDataCompileSolution;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenConvolutionBackwardDataImmediate(
    handle: miopenHandle_t,
    dy_desc: T,
    dy: *const c_void,
    w_desc: T,
    w: *const c_void,
    conv: C,
    dx_desc: T,
    dx: *mut c_void,
    workspace: *mut c_void,
    workspace_size: usize,
    solution_id: u64,
) -> miopenStatus_t {
    miopen_entry(
        "miopenConvolutionBackwardDataImmediate",
        |st| {
            let (o, m) = (&st.objects, &st.mem);
            format!(
                "{}, {}, {}, {}, {}, {}, {}, {}, {}, {workspace_size}, {solution_id}",
                o.render(handle as usize),
                o.render(dy_desc as usize),
                m.render(dy),
                o.render(w_desc as usize),
                m.render(w),
                o.render(conv as usize),
                o.render(dx_desc as usize),
                m.render(dx),
                m.render(workspace)
            )
        },
        |st| {
            immediate(
                st,
                Direction::BackwardData,
                handle,
                u![dx_desc, w_desc, conv, dy_desc],
                [dx, w.cast_mut(), dy.cast_mut()],
                workspace,
                workspace_size,
                solution_id,
            )
        },
    )
}
const _: miopen_fn::miopenConvolutionBackwardDataImmediate = miopenConvolutionBackwardDataImmediate;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenFindConvolutionBackwardDataAlgorithm(
    handle: miopenHandle_t,
    dy_desc: T,
    dy: *const c_void,
    w_desc: T,
    w: *const c_void,
    conv: C,
    dx_desc: T,
    dx: *mut c_void,
    request_count: c_int,
    returned_count: *mut c_int,
    results: *mut miopenConvAlgoPerf_t,
    workspace: *mut c_void,
    workspace_size: usize,
    exhaustive: bool,
) -> miopenStatus_t {
    miopen_entry(
        "miopenFindConvolutionBackwardDataAlgorithm",
        |st| {
            let (o, m) = (&st.objects, &st.mem);
            format!(
                "{}, {}, {}, {}, {}, {}, {}, {}, {request_count}, {}, {workspace_size}, exhaustive={exhaustive}",
                o.render(handle as usize),
                o.render(dy_desc as usize),
                m.render(dy),
                o.render(w_desc as usize),
                m.render(w),
                o.render(conv as usize),
                o.render(dx_desc as usize),
                m.render(dx),
                m.render(workspace)
            )
        },
        |st| {
            find(
                st,
                Direction::BackwardData,
                handle,
                u![dx_desc, w_desc, conv, dy_desc],
                [dx, w.cast_mut(), dy.cast_mut()],
                request_count,
                returned_count,
                results,
                workspace,
                workspace_size,
            )
        },
    )
}
const _: miopen_fn::miopenFindConvolutionBackwardDataAlgorithm =
    miopenFindConvolutionBackwardDataAlgorithm;

// ---------------------------------------------------------------------------------
// Backward weights (argument order: dy, x, conv, dw)
// ---------------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenConvolutionBackwardWeightsGetSolutionCount(
    handle: miopenHandle_t,
    dy_desc: T,
    x_desc: T,
    conv: C,
    dw_desc: T,
    count: *mut usize,
) -> miopenStatus_t {
    miopen_entry(
        "miopenConvolutionBackwardWeightsGetSolutionCount",
        |st| {
            render_problem(
                st,
                handle,
                dy_desc as usize,
                x_desc as usize,
                conv as usize,
                dw_desc as usize,
            )
        },
        |st| {
            solution_count(
                st,
                Direction::BackwardWeights,
                handle,
                u![x_desc, dw_desc, conv, dy_desc],
                count,
            )
        },
    )
}
const _: miopen_fn::miopenConvolutionBackwardWeightsGetSolutionCount =
    miopenConvolutionBackwardWeightsGetSolutionCount;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenConvolutionBackwardWeightsGetSolution(
    handle: miopenHandle_t,
    dy_desc: T,
    x_desc: T,
    conv: C,
    dw_desc: T,
    max_count: usize,
    count: *mut usize,
    solutions: *mut miopenConvSolution_t,
) -> miopenStatus_t {
    miopen_entry(
        "miopenConvolutionBackwardWeightsGetSolution",
        |st| {
            let r = render_problem(
                st,
                handle,
                dy_desc as usize,
                x_desc as usize,
                conv as usize,
                dw_desc as usize,
            );
            format!("{r}, {max_count}")
        },
        |st| {
            get_solutions(
                st,
                Direction::BackwardWeights,
                handle,
                u![x_desc, dw_desc, conv, dy_desc],
                max_count,
                count,
                solutions,
            )
        },
    )
}
const _: miopen_fn::miopenConvolutionBackwardWeightsGetSolution =
    miopenConvolutionBackwardWeightsGetSolution;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenConvolutionBackwardWeightsCompileSolution(
    handle: miopenHandle_t,
    dy_desc: T,
    x_desc: T,
    conv: C,
    dw_desc: T,
    solution_id: u64,
) -> miopenStatus_t {
    miopen_entry(
        "miopenConvolutionBackwardWeightsCompileSolution",
        |st| {
            let r = render_problem(
                st,
                handle,
                dy_desc as usize,
                x_desc as usize,
                conv as usize,
                dw_desc as usize,
            );
            format!("{r}, {solution_id}")
        },
        |st| {
            compile(
                st,
                Direction::BackwardWeights,
                handle,
                u![x_desc, dw_desc, conv, dy_desc],
                solution_id,
            )
        },
    )
}
const _: miopen_fn::miopenConvolutionBackwardWeightsCompileSolution =
    miopenConvolutionBackwardWeightsCompileSolution;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenConvolutionBackwardWeightsImmediate(
    handle: miopenHandle_t,
    dy_desc: T,
    dy: *const c_void,
    x_desc: T,
    x: *const c_void,
    conv: C,
    dw_desc: T,
    dw: *mut c_void,
    workspace: *mut c_void,
    workspace_size: usize,
    solution_id: u64,
) -> miopenStatus_t {
    miopen_entry(
        "miopenConvolutionBackwardWeightsImmediate",
        |st| {
            let (o, m) = (&st.objects, &st.mem);
            format!(
                "{}, {}, {}, {}, {}, {}, {}, {}, {}, {workspace_size}, {solution_id}",
                o.render(handle as usize),
                o.render(dy_desc as usize),
                m.render(dy),
                o.render(x_desc as usize),
                m.render(x),
                o.render(conv as usize),
                o.render(dw_desc as usize),
                m.render(dw),
                m.render(workspace)
            )
        },
        |st| {
            immediate(
                st,
                Direction::BackwardWeights,
                handle,
                u![x_desc, dw_desc, conv, dy_desc],
                [x.cast_mut(), dw, dy.cast_mut()],
                workspace,
                workspace_size,
                solution_id,
            )
        },
    )
}
const _: miopen_fn::miopenConvolutionBackwardWeightsImmediate =
    miopenConvolutionBackwardWeightsImmediate;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenFindConvolutionBackwardWeightsAlgorithm(
    handle: miopenHandle_t,
    dy_desc: T,
    dy: *const c_void,
    x_desc: T,
    x: *const c_void,
    conv: C,
    dw_desc: T,
    dw: *mut c_void,
    request_count: c_int,
    returned_count: *mut c_int,
    results: *mut miopenConvAlgoPerf_t,
    workspace: *mut c_void,
    workspace_size: usize,
    exhaustive: bool,
) -> miopenStatus_t {
    miopen_entry(
        "miopenFindConvolutionBackwardWeightsAlgorithm",
        |st| {
            let (o, m) = (&st.objects, &st.mem);
            format!(
                "{}, {}, {}, {}, {}, {}, {}, {}, {request_count}, {}, {workspace_size}, exhaustive={exhaustive}",
                o.render(handle as usize),
                o.render(dy_desc as usize),
                m.render(dy),
                o.render(x_desc as usize),
                m.render(x),
                o.render(conv as usize),
                o.render(dw_desc as usize),
                m.render(dw),
                m.render(workspace)
            )
        },
        |st| {
            find(
                st,
                Direction::BackwardWeights,
                handle,
                u![x_desc, dw_desc, conv, dy_desc],
                [x.cast_mut(), dw, dy.cast_mut()],
                request_count,
                returned_count,
                results,
                workspace,
                workspace_size,
            )
        },
    )
}
const _: miopen_fn::miopenFindConvolutionBackwardWeightsAlgorithm =
    miopenFindConvolutionBackwardWeightsAlgorithm;
