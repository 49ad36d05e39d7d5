#!/usr/bin/env python3
"""tksymgen.py -- build synthetic Mach-O dylibs and dSYMs for tracekit's symbolication tests.

Everything is built on Linux with Debian's clang-14, ld64.lld-14, dsymutil-14 and llvm-lipo-14,
from generated C/C++ sources that need no system headers:

  * N out-of-line functions over F translation units, each with an inline chain (0..5 levels of
    always_inline / static inline callees, some calling a shared header helper so that call_file
    differs from the CU file), callers of earlier functions, `static` (local-symbol) functions,
    C++ members and template instantiations (mangled names) and a few Swift-mangled symbol
    names (asm labels) so Swift flagging can be tested;
  * one dylib + dSYM per arch (arm64, arm64e, x86_64), optionally a universal dylib + dSYM,
    optionally an MH_EXECUTE (`--exe`, __TEXT at 0x100000000);
  * layout.tsv: per arch slice uuid, __TEXT vmaddr, __TEXT,__text address and size.

Deterministic: the same arguments give byte-identical files and UUIDs in any directory
(relative paths, -fdebug-prefix-map, -oso_prefix, ZERO_AR_DATE=1).

  tksymgen.py build --out DIR [--n 300] [--files 3] [--seed 1] [--arch arm64 ...] [--fat] [--exe] [--jobs 2]
                    [--dwarf 4|5]
  tksymgen.py addrs --layout DIR/layout.tsv --arch arm64 --count 1000 [--seed 1] [--slide 0x0]
"""
import argparse
import os
import random
import shutil
import struct
import subprocess
import sys


def which(*names):
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    sys.exit("tksymgen: need one of %s on PATH (make deps installs clang, lld, llvm)" % (names,))


WORDS = ["alpha", "bravo", "cache", "delta", "frame", "glyph", "index", "layer", "merge",
         "parse", "queue", "route", "scene", "token", "vault", "world"]


class Source:
    """Writes the generated C/C++ files; `self.rng` drives every choice so output is reproducible."""

    def __init__(self, seed, swift_names=False):
        self.rng = random.Random(seed)
        # --swift-names: every exported function gets a Swift-mangled symbol (same code, same
        # random choices, so a C build and a Swift build of one seed differ only in the names)
        self.swift_names = swift_names

    def header(self):
        out = ["/* tksymgen: helpers inlined into every file, so call_file != the CU's file */",
               "#ifndef TKSYMGEN_H", "#define TKSYMGEN_H", "extern int tk_sink(int);",
               "extern volatile int tk_g;"]
        for k in range(32):
            out.append("static inline __attribute__((always_inline)) int hdr_%d(int x) {" % k)
            out.append("    int y = x * %d + %d;" % (self.rng.randint(3, 99), k))
            out.append("    tk_g = y;")
            if k % 3 == 2:
                out.append("    y += hdr_%d(y >> 2);" % (k - 1))
            out.append("    return tk_sink(y ^ %d);" % (k * 131))
            out.append("}")
        out += ["#endif", ""]
        return "\n".join(out)

    def c_unit(self, m, count):
        r = self.rng
        out = ["/* tksymgen: C unit %d */" % m, '#include "tksymgen.h"', ""]
        callable_ = []
        for i in range(count):
            name = "u%d_f%d" % (m, i)
            if r.random() < 0.1:
                name += "_" + "_".join(r.choice(WORDS) for _ in range(r.randint(2, 6)))
            depth = r.choices([0, 1, 2, 3, 5], [25, 30, 25, 12, 8])[0]
            chain = ["%s_in%d" % (name, d) for d in range(depth)]
            for d in reversed(range(depth)):
                attr = "static inline __attribute__((always_inline))" if r.random() < 0.6 else "static inline"
                out.append("%s int %s(int x) {" % (attr, chain[d]))
                out.append("    int v = x ^ %d;" % r.randint(1, 4000))
                if d + 1 < depth:
                    out.append("    if (v & %d)" % (1 << r.randint(0, 4)))
                    if r.random() < 0.3:
                        out.append("        v = %s(v + 7) - %s(v * 5);" % (chain[d + 1], chain[d + 1]))
                    else:
                        out.append("        v = %s(v * 3);" % chain[d + 1])
                elif r.random() < 0.5:
                    out.append("    v = hdr_%d(v);" % r.randrange(32))
                out.append("    tk_g = v;")
                out.append("    return tk_sink(v);")
                out.append("}")
            kind = r.choices(["leaf", "static", "caller", "swift"], [55, 15, 28, 2])[0]
            if kind == "caller" and not callable_:
                kind = "leaf"
            if m == 0 and i == 0:
                kind = "leaf"  # entry point of --exe builds
            if kind == "swift" or (self.swift_names and kind != "static" and not (m == 0 and i == 0)):
                # An asm label gives the symbol a Swift-mangled name, as a Swift compiler would.
                shapes = ["V3runyyF", "C6updateyySiF", "V5countSivg", "C5fetch2id10completionySi_ySbctF"]
                shape = shapes[0] if kind == "swift" else shapes[i % len(shapes)]
                mangled = "$s7tksynth%d%s%s" % (len(name), name, shape)
                out.append('int %s(int x) __asm__("_%s");' % (name, mangled))
            out.append("%s__attribute__((noinline)) int %s(int x) {" % ("static " if kind == "static" else "", name))
            out.append("    int acc = x;")
            for _ in range(r.randint(0, 2)):
                out.append("    for (int k = 0; k < (x & %d); k++) {" % r.choice([3, 7]))
                out.append("        acc += tk_sink(acc - k);")
                if chain and r.random() < 0.5:
                    out.append("        acc ^= %s(acc);" % chain[0])
                out.append("    }")
            if chain:
                out.append("    acc += %s(acc + 1);" % chain[0])
            if kind == "caller":
                for callee in r.sample(callable_, min(len(callable_), r.randint(1, 3))):
                    out.append("    acc += %s(acc);" % callee)
            for _ in range(r.randint(0, 3)):
                out.append("    acc = acc * %d + tk_sink(acc >> %d);" % (r.randint(2, 40), r.randint(1, 7)))
            out.append("    return acc;")
            out.append("}")
            if kind == "static":
                out.append("__attribute__((noinline)) int %s_pub(int x) { return %s(x) - 1; }" % (name, name))
                callable_.append(name + "_pub")
            else:
                callable_.append(name)
            callable_ = callable_[-24:]
            out.append("")
        return "\n".join(out)

    def cxx_unit(self, m, count):
        out = ["// tksymgen: C++ unit %d" % m, '#include "tksymgen.h"', "",
               "namespace tksyn { namespace u%d {" % m,
               "template <typename T> struct Cell { T v; __attribute__((noinline)) T take(int k) const; };",
               "template <typename T> __attribute__((noinline)) T Cell<T>::take(int k) const "
               "{ return (T)tk_sink((int)v - k); }", ""]
        for i in range(count):
            out.append("struct Node%d {" % i)
            out.append("    int s;")
            out.append("    __attribute__((noinline)) int step(int x, const char *why);")
            out.append("    static inline int mix(int x) { tk_g = x; return tk_sink(x + %d); }" % i)
            out.append("};")
            out.append("__attribute__((noinline)) int Node%d::step(int x, const char *why) {" % i)
            out.append("    Cell<long> a{ (long)x }; Cell<unsigned char> b{ (unsigned char)s };")
            out.append("    return mix(x + (int)why[0]) + (int)a.take(s) + (int)b.take(x);")
            out.append("}")
            out.append('extern "C" __attribute__((noinline)) int cxx_u%d_%d(int x) '
                       '{ Node%d n{x}; return n.step(x, "q"); }' % (m, i, i))
            out.append("")
        out += ["} }", ""]
        return "\n".join(out)


def generate(args, out):
    src = os.path.join(out, "src")
    os.makedirs(src, exist_ok=True)
    g = Source(args.seed, getattr(args, "swift_names", False))
    files = {"tksymgen.h": g.header()}
    n_cxx = args.n // 20
    n_c = args.n - n_cxx
    for m in range(args.files):
        files["unit_%03d.c" % m] = g.c_unit(m, n_c // args.files + (1 if m < n_c % args.files else 0))
    if n_cxx:
        files["cxx_000.cpp"] = g.cxx_unit(0, n_cxx)
    for name, text in files.items():
        path = os.path.join(src, name)
        # rewrite only when changed, so a rebuild with the same arguments touches nothing
        if not os.path.exists(path) or open(path).read() != text:
            with open(path, "w") as f:
                f.write(text)
    return sorted(n for n in files if not n.endswith(".h"))


def run(cmd, cwd, env=None):
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode:
        sys.exit("tksymgen: %s failed:\n%s" % (" ".join(cmd), p.stdout))


def run_all(cmds, cwd, jobs):
    pending = list(cmds)
    procs = []
    while pending or procs:
        while pending and len(procs) < jobs:
            c = pending.pop(0)
            procs.append((c, subprocess.Popen(c, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)))
        c, p = procs.pop(0)
        outp = p.communicate()[0]
        if p.returncode:
            sys.exit("tksymgen: %s failed:\n%s" % (" ".join(c), outp.decode(errors="replace")))


CPUS = {(0x0100000C, 0): "arm64", (0x0100000C, 2): "arm64e", (0x01000007, 3): "x86_64"}


def slices(path):
    """(arch, uuid, text_vmaddr, text_addr, text_size) for each slice of a Mach-O file."""
    data = open(path, "rb").read()
    (magic,) = struct.unpack_from(">I", data, 0)
    offs = [0]
    if magic == 0xCAFEBABE:
        (n,) = struct.unpack_from(">I", data, 4)
        offs = [struct.unpack_from(">iiIII", data, 8 + 20 * i)[2] for i in range(n)]
    res = []
    for base in offs:
        _, cpu, sub, _, ncmds, _, _ = struct.unpack_from("<IiiIIII", data, base)
        arch = CPUS.get((cpu & 0xFFFFFFFF, sub & 0xFF), "cpu%x" % cpu)
        p, uuid, vmaddr, taddr, tsize = base + 32, "", 0, 0, 0
        for _ in range(ncmds):
            cmd, size = struct.unpack_from("<II", data, p)
            if cmd == 0x1B:
                h = data[p + 8:p + 24].hex().upper()
                uuid = "-".join([h[:8], h[8:12], h[12:16], h[16:20], h[20:]])
            elif cmd == 0x19:
                seg = data[p + 8:p + 24].rstrip(b"\0")
                (nsect,) = struct.unpack_from("<I", data, p + 64)
                if seg == b"__TEXT":
                    (vmaddr,) = struct.unpack_from("<Q", data, p + 24)
                    for s in range(nsect):
                        q = p + 72 + 80 * s
                        if data[q:q + 16].rstrip(b"\0") == b"__text":
                            taddr, tsize = struct.unpack_from("<QQ", data, q + 32)
            p += size
        res.append((arch, uuid, vmaddr, taddr, tsize))
    return res


def cmd_build(args):
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ, ZERO_AR_DATE="1")
    os.environ.update(env)
    units = generate(args, out)
    clang, clangxx = which("clang-14", "clang"), which("clang++-14", "clang++")
    ld, dsymutil, lipo = which("ld64.lld-14", "ld64.lld"), which("dsymutil-14", "dsymutil"), which("llvm-lipo-14", "llvm-lipo")
    archs = args.arch or ["arm64"]
    rows = []
    products = []
    for arch in archs:
        objdir = "obj-" + arch
        os.makedirs(os.path.join(out, objdir), exist_ok=True)
        cmds, objs = [], []
        for u in units:
            obj = os.path.join(objdir, os.path.splitext(u)[0] + ".o")
            objs.append(obj)
            cxx = u.endswith(".cpp")
            cmds.append([clangxx if cxx else clang, "-g" if args.dwarf == 4 else "-gdwarf-%d" % args.dwarf, "-O2",
                         "-target", arch + "-apple-macos11",
                         "-fdebug-prefix-map=%s=." % out] +
                        (["-std=c++14", "-fno-exceptions", "-nostdinc++"] if cxx else []) +
                        ["-c", os.path.join("src", u), "-o", obj])
        run_all(cmds, out, args.jobs)
        if args.exe:
            prod = "%s-%s" % (args.name, arch)
            kind = ["-execute", "-e", "_u0_f0"]
        else:
            prod = "%s-%s.dylib" % (args.name, arch)
            kind = ["-dylib", "-install_name", "@rpath/%s.dylib" % args.name]
        run([ld, "-arch", arch, "-platform_version", "macos", "11.0", "11.0"] + kind +
            ["-undefined", "dynamic_lookup", "-oso_prefix", out + "/", "-o", prod] + objs, out, env)
        if arch == "arm64e":
            # ld64.lld-14 writes CPU_SUBTYPE_ARM64_ALL for arm64e; set what Apple's ld writes
            # (subtype 2 with the pointer-authentication ABI flag) so the slice really is arm64e.
            with open(os.path.join(out, prod), "r+b") as f:
                f.seek(8)
                f.write(struct.pack("<I", 0x80000002))
        run([dsymutil, "-num-threads", str(args.jobs), prod, "-o", prod + ".dSYM"], out, env)
        products.append(prod)
        for s in slices(os.path.join(out, prod)):
            rows.append((prod,) + s)
    if args.fat and len(archs) > 1:
        fat = args.name if args.exe else args.name + ".dylib"
        run([lipo, "-create", "-output", fat] + products, out, env)
        # dsymutil runs `lipo` to merge the per-arch DWARF of a universal input.
        shim = os.path.join(out, "bin")
        os.makedirs(shim, exist_ok=True)
        if not os.path.lexists(os.path.join(shim, "lipo")):
            os.symlink(lipo, os.path.join(shim, "lipo"))
        fenv = dict(env, PATH=shim + os.pathsep + env.get("PATH", ""))
        run([dsymutil, "-num-threads", str(args.jobs), fat, "-o", fat + ".dSYM"], out, fenv)
        for s in slices(os.path.join(out, fat)):
            rows.append((fat,) + s)
    with open(os.path.join(out, "layout.tsv"), "w") as f:
        f.write("file\tarch\tuuid\ttext_vmaddr\ttext_addr\ttext_size\n")
        for r in rows:
            f.write("%s\t%s\t%s\t0x%x\t0x%x\t0x%x\n" % r)


def cmd_addrs(args):
    lo = hi = None
    for line in open(args.layout).read().splitlines()[1:]:
        f = line.split("\t")
        if f[1] == args.arch and (args.file is None or f[0] == args.file):
            lo = int(f[4], 16)
            hi = lo + int(f[5], 16)
            break
    if lo is None:
        sys.exit("tksymgen: no %s slice in %s" % (args.arch, args.layout))
    r = random.Random(args.seed)
    slide = int(args.slide, 0)
    sys.stdout.write("".join("0x%x\n" % (r.randrange(lo, hi) + slide) for _ in range(args.count)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--out", required=True)
    b.add_argument("--n", type=int, default=300)
    b.add_argument("--files", type=int, default=3)
    b.add_argument("--seed", type=int, default=1)
    b.add_argument("--arch", action="append", choices=["arm64", "arm64e", "x86_64"])
    b.add_argument("--fat", action="store_true")
    b.add_argument("--exe", action="store_true")
    b.add_argument("--name", default="libtks")
    b.add_argument("--jobs", type=int, default=2)
    b.add_argument("--swift-names", action="store_true",
                   help="give every exported C function a Swift-mangled symbol name")
    b.add_argument("--dwarf", type=int, default=4, choices=[4, 5], help="DWARF version (clang's -gdwarf-N)")
    a = sub.add_parser("addrs")
    a.add_argument("--layout", required=True)
    a.add_argument("--arch", default="arm64")
    a.add_argument("--file")
    a.add_argument("--count", type=int, default=1000)
    a.add_argument("--seed", type=int, default=1)
    a.add_argument("--slide", default="0")
    args = ap.parse_args()
    cmd_build(args) if args.cmd == "build" else cmd_addrs(args)


if __name__ == "__main__":
    main()
