"""``jbtrace check`` on a program with methods of more than 2048 blocks (issue 12): the recorder
gives such a method one method id per page of 2048 blocks, and counts ids in trace.json's
``counts.methods``; check must count the pages the same way."""

from __future__ import annotations

from pathlib import Path

from jbgui.model import layout
from jbgui.model.check import run_check
from jbgui.model.statics import load_statics


def _generated(tmp_path: Path, branches: int) -> Path:
    body = "\n".join(f"        if (x == {i}) s += {i};" for i in range(branches))
    source = tmp_path / "many_blocks"
    source.mkdir()
    (source / "Main.java").write_text(f"""public class Main {{
    static int branchy(int x) {{
        int s = 0;
{body}
        return s;
    }}

    static int small(int x) {{
        return x + 1;
    }}

    public static void main(String[] args) {{
        int t = 0;
        for (int i = 0; i < 50; i++) {{
            t += branchy(i * 37) + small(i);
        }}
        System.out.println(t);
    }}
}}
""")
    return source


def test_methods_of_several_block_pages_are_counted_like_the_recorder(record, default_jdk, tmp_path):
    run = record(_generated(tmp_path, 1500), default_jdk, jdk=False)
    assert run.exit_code == 0, run.describe()
    st = load_statics(run.trace_dir)
    branchy = st.find_methods("Main", "branchy")[0]
    pages = -(-int(st.m_blocks[branchy]) // layout.BLOCKS_PER_PAGE)
    assert pages >= 2                                   # the case of the issue: a paged method
    assert run.trace_dir.joinpath("static.xml").read_text().count(f'block_pages="{pages}"') == 1
    report = run_check(run.trace_dir)
    assert not [f for f in report.findings if f.code == "count-methods"], [f.format() for f in report.findings]
    assert report.exit_status == 0, [f.format() for f in report.findings]
