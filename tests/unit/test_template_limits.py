"""Issue 15: sandboxed rendering with limits. Every Jinja runtime error is one line naming the
task, template and item; output size and render time are bounded; the sandbox still refuses the
escape routes it refused before."""

from __future__ import annotations

import time

import pytest

from harness.errors import HarnessError
from harness.items import Instance
from harness.outputs.prompts import build_prompt
from harness.spec.task import TaskSpec
from harness.templates import (
    MAX_RENDER_SECONDS,
    TemplateRenderError,
    check_template,
    render,
)

RUNTIME = {
    "div_zero": ("{{ 1/0 }}", "ZeroDivisionError"),
    "str_plus_int": ("{{ 'a' + 1 }}", "TypeError"),
    "undefined": ("{{ nope }}", "'nope' is undefined"),
    "recursion": ("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "recursion too deep"),
    "recursive_loop": ("{% for x in [1] recursive %}{{ loop([1]) }}{% endfor %}",
                       "recursion too deep"),
    "big_string": ("{{ 'x' * 10**10 }}", "size limit"),
    "big_list": ("{{ [1] * 10**10 }}", "size limit"),
    "big_power": ("{{ 9 ** 999999999 }}", "size limit"),
    "big_center": ("{{ 'x'|center(10**10) }}", "size limit"),
    "big_format": ("{{ '%1000000000d'|format(1) }}", "size limit"),
    "big_percent": ("{{ '%1000000000d' % 1 }}", "size limit"),
    "nested_loops_output": (
        "{% for i in range(99999) %}{% for j in range(99999) %}xxxxxxxxxx{% endfor %}"
        "{% endfor %}", "size limit"),
    "nested_loops_silent": (
        "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}",
        "time limit"),
    "exponential_macro": ("{% macro f(n) %}{% if n %}{{ f(n-1) }}{{ f(n-1) }}{% endif %}"
                          "{% endmacro %}{{ f(60) }}", "time limit"),
}

ESCAPES = [
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ ''.__class__ }}",
    "{{ cycler.__init__.__globals__ }}",
    "{{ joiner.__init__.__globals__.os }}",
    "{{ namespace.__init__.__globals__ }}",
    "{{ lipsum.__globals__ }}",
    "{{ range.__self__ }}",
    "{{ self.__dict__ }}",
    "{{ [].append(1) }}",
    "{{ {}.update(a=1) }}",
    "{{ ''.format.__self__ }}",
    "{{ (1).__class__.__base__ }}",
]


@pytest.mark.parametrize("case", sorted(RUNTIME))
def test_runtime_errors_and_limits_are_one_line(case: str) -> None:
    src, expected = RUNTIME[case]
    start = time.monotonic()
    with pytest.raises(TemplateRenderError) as info:
        render(src, {"a": 1})
    assert time.monotonic() - start < MAX_RENDER_SECONDS + 3
    assert expected in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("src", ESCAPES)
def test_sandbox_escapes_stay_refused(src: str) -> None:
    with pytest.raises(TemplateRenderError) as info:
        render(src, {})
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("tag", ["{% include 'x' %}", "{% import 'x' as y %}",
                                 "{% from 'x' import y %}", "{% extends 'x' %}"])
def test_include_import_extends_refused_when_checked(tag: str) -> None:
    import jinja2

    with pytest.raises(jinja2.TemplateSyntaxError, match="is not allowed"):
        check_template(tag)


def test_ordinary_templates_render_as_before() -> None:
    src = ("{{ a }}|{% for x in xs %}{{ loop.index }}/{{ loop.length }}{{ x|upper }} "
           "{% endfor %}{{ xs|join(',') }} {{ '%03d' % a }} {{ 'ab'|replace('a', 'c') }}"
           "{% for k, v in d.items() %}{{ k }}={{ v }}{% endfor %}{{ range(3)|sum }}")
    out = render(src, {"a": 7, "xs": ["p", "q"], "d": {"z": 1}})
    assert out == "7|1/2P 2/2Q p,q 007 cbz=13"


def test_render_error_names_task_template_and_item() -> None:
    spec = TaskSpec.model_validate({
        "name": "tsk", "description": "d",
        "source": {"type": "generator", "name": "addition"},
        "buckets": {"values": [1]}, "roles": {"id_max": 1},
        "templates": [{"id": "tpl", "prompt": "{{ a / 0 }}"}],
        "output": {"type": "generate"}})
    from harness.spec.buckets import build_buckets

    bucket = build_buckets(spec.buckets, spec.roles)[0]
    item = Instance("1/0", {"a": 1, "target": "1"}, 1.0, bucket)
    with pytest.raises(HarnessError) as info:
        build_prompt(spec, spec.templates[0], item, [])
    msg = str(info.value)
    assert msg.startswith("task tsk: template 'tpl' (prompt), item 1/0: ZeroDivisionError")
    assert "\n" not in msg
