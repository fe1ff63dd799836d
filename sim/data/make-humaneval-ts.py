#!/usr/bin/env python3
"""Builds humaneval-ts.jsonl.gz, HumanEval in TypeScript for `hydra bench --tasks humaneval-ts`.

README.md beside this file says what it takes and why. In short, for each HumanEval task:
  * the prompt: the task's docstring as MultiPL-E's TypeScript translator words it ("reworded"
    terms, doctests "transform"ed into TypeScript, every line a // comment), then the typed
    function signature MultiPL-E's humaneval-ts gives (multipl-e-signatures.tsv);
  * the tests: HumanEval's `assert f(...) == value` checks, translated as MultiPL-E does
    (assert.deepEqual on node:assert, in a test() function);
  * the solution (what the simulated model writes): HumanEval-X's JavaScript canonical solution,
    the body of the function, under that signature (the JavaScript name of the function, where
    the body calls itself, written as the TypeScript one).
A task is kept only where tsc (TypeScript 7, no tsconfig.json: Hydra's defaults) accepts prompt +
solution + tests, and node passes the tests on tsc's JavaScript, node run in bubblewrap.

Usage: make-humaneval-ts.py HUMANEVAL_PYTHON.jsonl.gz HUMANEVAL_JS.jsonl.gz TSC OUT.jsonl.gz DROPPED.tsv
"""
import ast
import concurrent.futures
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# MultiPL-E's terms for TypeScript (dataset_builder/terms.csv): Python's words in the docstring's
# prose, replaced in this order.
TERMS = [("Python", "TypeScript"), ("py", "ts"), ("array", "array"), ("list", "array"),
         ("tuple", "array"), ("dictionary", "object"), ("None", "undefined"), ("True", "true"),
         ("False", "false")]
DOCTEST = re.compile(r">>>.*\n.*\n")


def reword(text):
    """MultiPL-E's translate_terms: each Python term becomes TypeScript's, fixing a/an."""
    for py, ts in TERMS:
        if py not in text:
            continue
        if "an " + py in text and ts[0].lower() not in "aeiou":
            text = text.replace("an " + py, "a " + ts)
        elif "a " + py in text and ts[0].lower() in "aeiou":
            text = text.replace("a " + py, "an " + ts)
        text = text.replace(py, ts)
    return text


def reword_docstring(doc):
    """Rewords the prose of a docstring and leaves its doctests alone."""
    out, last = "", 0
    for m in DOCTEST.finditer(doc):
        out += reword(doc[last:m.start()]) + doc[m.start():m.end()]
        last = m.end()
    return out + reword(doc[last:])


def literal(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "undefined"
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (int, float)):
        return repr(v)
    raise ValueError("literal %r" % (v,))


def expr(e, entry):
    """A Python expression of HumanEval's tests or doctests in TypeScript (MultiPL-E's rules)."""
    if isinstance(e, ast.Constant):
        return literal(e.value)
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub) and isinstance(e.operand, ast.Constant) \
            and isinstance(e.operand.value, (int, float)) and not isinstance(e.operand.value, bool):
        return literal(-e.operand.value)
    if isinstance(e, ast.Name):
        return e.id
    if isinstance(e, (ast.List, ast.Tuple)):
        return "[" + ", ".join(expr(x, entry) for x in e.elts) + "]"
    if isinstance(e, ast.Dict):
        return "{" + ", ".join("%s: %s" % (expr(k, entry), expr(v, entry)) for k, v in zip(e.keys, e.values)) + "}"
    if isinstance(e, ast.Call) and not e.keywords:
        return "%s(%s)" % (expr(e.func, entry), ", ".join(expr(a, entry) for a in e.args))
    raise ValueError("expression %s" % ast.dump(e)[:60])


def transform_doctests(doc, entry):
    """Doctests `>>> f(x)` / `result` written in TypeScript; one that does not translate stays."""
    out, last = "", 0
    for m in DOCTEST.finditer(doc):
        out += doc[last:m.start()]
        call, result = doc[m.start():m.end()].split("\n")[:2]
        try:
            c = expr(ast.parse(call.strip(">>> ")).body[0].value, entry)
            r = expr(ast.parse(result.strip()).body[0].value, entry)
            out += ">>> " + c + "\n    " + r + "\n"
        except (SyntaxError, ValueError, IndexError, AttributeError):
            out += doc[m.start():m.end()]
        last = m.end()
    return out + doc[last:]


def prompt_of(py_prompt, entry, signature):
    before, sep, rest = py_prompt.replace("'''", '"""').partition('"""')
    doc, sep2, after = rest.partition('"""')
    if not sep or not sep2:
        raise ValueError("no docstring")
    module = ast.parse(before + '"""' + reword_docstring(doc) + '"""' + after + "    pass")
    fns = [n for n in module.body if isinstance(n, ast.FunctionDef)]
    if len(fns) != 1:
        raise ValueError("the prompt defines %d functions (helpers)" % len(fns))
    body = [st for st in fns[0].body if not isinstance(st, (ast.Import, ast.ImportFrom))]  # 115: import math first
    if not (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)):
        raise ValueError("no docstring")
    desc = transform_doctests(body[0].value.value, entry)
    return "//" + re.sub(r"\n(\s+)", "\n// ", desc.strip()) + "\n" + signature + "\n"


def tests_of(py_test, entry):
    module = ast.parse(py_test)
    check = [n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "check"]
    if not check:
        raise ValueError("no check function")
    param = check[0].args.args[0].arg
    lines = ["declare var require: any;\nconst assert = require('node:assert');\n", "", "function test() {",
             "  let candidate = %s;" % entry]
    names = (param, "candidate", entry)
    n = 0
    for st in check[0].body:
        check_ = comparison(st.test, names) if isinstance(st, ast.Assert) else None
        if check_ is None:
            continue  # as MultiPL-E's translator, only `candidate(...) == value`
        left, right = check_
        left.func.id = "candidate"
        try:
            lines.append("  assert.deepEqual(%s,%s);" % (expr(left, entry), expr(right, entry)))
            n += 1
        except ValueError:
            continue
    if n == 0:
        raise ValueError("no test of the form f(...) == value")
    return "\n".join(lines + ["}", "", "test();"]), n


def is_call_of(e, names):
    return isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in names


def untuple(e):
    """tuple(x) is x: TypeScript's arrays stand for Python's lists and tuples alike."""
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "tuple" and len(e.args) == 1:
        return e.args[0]
    return e


def comparison(t, names):
    """A check as (call, expected value), or None. Besides `f(...) == value` (MultiPL-E's form),
    the forms its hand-cleaned HumanEval writes that way: `f(...)`, `not f(...)`, `f(...) is
    True|False`, and `tuple(f(...)) == tuple(value)`; a check of f against itself is no check."""
    true, false = ast.Constant(True), ast.Constant(False)
    if is_call_of(t, names):
        return t, true
    if isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not) and is_call_of(t.operand, names):
        return t.operand, false
    if not (isinstance(t, ast.Compare) and len(t.ops) == 1):
        return None
    left, right = untuple(t.left), untuple(t.comparators[0])
    if not is_call_of(left, names) or any(is_call_of(x, names) for x in ast.walk(right)):
        return None
    if isinstance(t.ops[0], ast.Eq):
        return left, right
    if isinstance(t.ops[0], ast.Is) and isinstance(right, ast.Constant) and isinstance(right.value, bool):
        return left, right
    return None


JS_NAME = re.compile(r"const\s+([A-Za-z_$][\w$]*)\s*=\s*\(")


def solution_of(js, entry):
    m = JS_NAME.findall(js["declaration"])
    body = js["canonical_solution"]
    if m:
        body = re.sub(r"\b%s\b" % re.escape(m[-1]), entry, body)
    return body


def run(argv, cwd, timeout=60):
    p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, (p.stdout + p.stderr).strip()


def bwrap_node(d):
    """node on d/out/prog.js in bubblewrap: no network, only /usr and d (read-only) visible."""
    argv = ["bwrap", "--die-with-parent", "--unshare-all", "--ro-bind", "/usr", "/usr",
            "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin",
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--ro-bind", d, "/box", "--chdir", "/tmp",
            "--clearenv", "--setenv", "PATH", "/usr/bin", "/usr/bin/node", "/box/out/prog.js"]
    return run(argv, "/", timeout=30)


def verify(tsc, task):
    """None when tsc accepts the task's program and node passes its tests, else (stage, reason)."""
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o755)
        with open(os.path.join(d, "prog.ts"), "w") as f:
            f.write(task["prompt"] + task["solution"] + "\n" + task["test"] + "\n")
        rc, out = run([tsc, "--noEmit", "--pretty", "false", "prog.ts"], d)
        if rc != 0:
            return "tsc", out.splitlines()[0] if out else "exit %d" % rc
        rc, out = run([tsc, "--pretty", "false", "--outDir", "out", "prog.ts"], d)
        if rc != 0:
            return "tsc-emit", out.splitlines()[0] if out else "exit %d" % rc
        rc, out = bwrap_node(d)
        if rc != 0:
            first = [l for l in out.splitlines() if "Error" in l][:1] or out.splitlines()[:1] or ["exit %d" % rc]
            return "node", first[0]
    return None


def main():
    py_path, js_path, tsc, out_path, dropped_path = sys.argv[1:6]
    sigs = {}
    with open(os.path.join(HERE, "multipl-e-signatures.tsv")) as f:
        for line in f:
            n, sig = line.rstrip("\n").split("\t")
            sigs[int(n)] = sig
    js = {int(r["task_id"].split("/")[1]): r for r in map(json.loads, gzip.open(js_path, "rt"))}
    candidates, dropped = [], []
    for r in map(json.loads, gzip.open(py_path, "rt")):
        n = int(r["task_id"].split("/")[1])
        fns = [x for x in ast.parse(r["prompt"] + "    pass").body if isinstance(x, ast.FunctionDef)]
        entry = fns[-1].name
        tid = "HumanEval_%d_%s" % (n, entry)
        try:
            if n not in sigs:
                raise ValueError("not in MultiPL-E's humaneval-ts (no signature in multipl-e-signatures.tsv)")
            prompt = prompt_of(r["prompt"], entry, sigs[n])
            test, asserts = tests_of(r["test"], entry)
            solution = solution_of(js[n], entry)
        except (ValueError, SyntaxError) as e:
            dropped.append((n, tid, "translate", str(e)))
            continue
        candidates.append((n, {"id": tid, "source": "humaneval-ts", "lang": "typescript", "prompt": prompt,
                               "solution": solution, "test": test}))
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        verdicts = list(pool.map(lambda c: verify(tsc, c[1]), candidates))
    kept = []
    for (n, task), why in zip(candidates, verdicts):
        if why is None:
            kept.append(task)
        else:
            dropped.append((n, task["id"]) + why)
    dropped = [d[1:] for d in sorted(dropped)]
    with gzip.GzipFile(out_path, "wb", mtime=0) as f:
        for t in kept:
            f.write((json.dumps(t, ensure_ascii=False) + "\n").encode())
    with open(dropped_path, "w") as f:
        f.write("task\tstage\treason\n")
        for d in dropped:
            f.write("\t".join(x.replace("\t", " ") for x in d) + "\n")
    stages = {}
    for _, s, _ in dropped:
        stages[s] = stages.get(s, 0) + 1
    print("kept %d of %d; dropped: %s" % (len(kept), len(kept) + len(dropped), stages))


if __name__ == "__main__":
    main()
