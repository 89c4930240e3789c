"""Run by precompile.mjs in Pyodide under Node: precompile_zip(src, dst, prefix) compiles a zip's .py files
to .pyc with the page's own CPython (precompile.mjs says why and how)."""
import base64, csv, hashlib, importlib.util, io, marshal, warnings, zipfile

# flags=0 (timestamp pyc) with zero mtime/size: zipimport and SourcelessFileLoader only compare those
# fields with a .py next to the .pyc, and we remove that .py; if one is ever added back, the mismatch
# makes Python fall back to the source instead of running stale bytecode.
HEADER = importlib.util.MAGIC_NUMBER + bytes(12)

# Refuse to write .pyc with column tables if PYTHONNODEBUGRANGES did not reach the interpreter.
if any(column is not None for _, _, column, _ in compile("x = 1", "<check>", "exec").co_positions()):
    raise RuntimeError("compile() still records column positions: PYTHONNODEBUGRANGES was not applied")

def compile_source(source, page_path):
    """Return the pyc bytes for source, or None when it does not compile."""
    try:
        with warnings.catch_warnings():
            # SyntaxWarnings (invalid escapes in old modules) are not errors and the reader never sees them.
            warnings.simplefilter("ignore")
            code = compile(source, page_path, "exec", dont_inherit=True, optimize=0)
    except (SyntaxError, ValueError):
        return None
    return HEADER + marshal.dumps(code)

def record_hash(data):
    """Return the RECORD form of data's sha256 (urlsafe base64, no padding)."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()

def rewrite_record(record, renamed, contents):
    """Return RECORD text with compiled .py rows replaced by rows for their .pyc."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for row in csv.reader(io.StringIO(record.decode())):
        if row and row[0] in renamed:
            new = renamed[row[0]]
            row = [new, record_hash(contents[new]), str(len(contents[new]))]
        writer.writerow(row)
    return out.getvalue().encode()

def precompile_zip(src, dst, prefix):
    """Write dst: src with its .py compiled to .pyc, deflated; return a report dict."""
    renamed, kept, entries, contents = {}, [], [], {}
    with zipfile.ZipFile(src) as zin:
        for info in zin.infolist():
            name, data = info.filename, zin.read(info)
            if name.endswith(".py"):
                pyc = compile_source(data, prefix + name)
                if pyc is None:
                    kept.append(name)
                else:
                    renamed[name] = name + "c"
                    name, data = name + "c", pyc
            entries.append((info, name))
            contents[name] = data
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as zout:
        for info, name in entries:
            data = contents[name]
            if name.endswith(".dist-info/RECORD"):
                data = rewrite_record(data, renamed, contents)
            out = zipfile.ZipInfo(name, date_time=info.date_time)
            out.external_attr = info.external_attr
            zout.writestr(out, data, zipfile.ZIP_DEFLATED)
    return {"compiled": len(renamed), "kept": kept}
