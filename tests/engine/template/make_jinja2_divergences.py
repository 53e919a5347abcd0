#!/usr/bin/env python3
"""Regenerates jinja2_divergences.json: the expected outputs, rendered by
Python Jinja2 (what Hugging Face uses; ImmutableSandboxedEnvironment with
trim_blocks, lstrip_blocks, loopcontrols, HF's tojson and raise_exception),
for the conformance cases where @huggingface/jinja disagrees with Jinja2.
Not run by ctest (needs `pip install jinja2`); the file is checked in.
Usage: make_jinja2_divergences.py REFERENCE_RENDERS.json > jinja2_divergences.json
"""
import json
import sys

from jinja2.exceptions import TemplateError
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


def raise_exception(message):
    raise TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
env.filters["tojson"] = tojson
env.globals["raise_exception"] = raise_exception

out = []
for case in json.load(open(sys.argv[1]))["cases"]:
    try:
        expected = env.from_string(case["source"]).render(**case["context"])
    except TemplateError as e:
        if type(e) is TemplateError and case.get("raised") == str(e):
            continue  # both raised the template's own error
        raise
    if case.get("output") != expected:
        out.append({"template": case["template"], "conversation": case["conversation"],
                    "reference_result": case.get("output", case.get("error", case.get("raised"))),
                    "jinja2_output": expected})
json.dump({"why": "Python Jinja2 iterates an undefined value (message.tool_calls) as empty; "
                  "@huggingface/jinja throws. reprox follows Jinja2.",
           "generated_by": "make_jinja2_divergences.py with Jinja2 3.1.6",
           "cases": out}, sys.stdout, ensure_ascii=False, indent=1)
print()
