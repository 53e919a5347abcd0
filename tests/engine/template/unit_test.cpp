// Interpreter pieces. Expected strings are what Python Jinja2 3.1 renders
// under Hugging Face's settings (checked with it when written).
#include <gtest/gtest.h>

#include "engine/template/chat_template.hpp"

namespace {

using reprox::tmpl::ChatTemplate;
using reprox::tmpl::RenderError;

// Renders src with a JSON context; errors come back as "ERROR: msg" or
// "RAISED: msg".
std::string render(const std::string& src, const std::string& ctx_json = "{}") {
  auto t = ChatTemplate::compile(src);
  reprox::json::Value ctx;
  EXPECT_FALSE(reprox::json::parse(ctx_json, ctx)) << ctx_json;
  auto r = t->render(ctx);
  if (auto* e = std::get_if<RenderError>(&r)) return (e->raised_by_template ? "RAISED: " : "ERROR: ") + e->message;
  return std::get<std::string>(r);
}

std::string compile_error(const std::string& src) {
  try {
    ChatTemplate::compile(src);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(TemplateWhitespace, TrimAndLstripBlocks) {
  EXPECT_EQ("  x\n  y", render("  {% if true %}\n  x\n  {% endif %}\n  y"));
  EXPECT_EQ("a    b   \nx", render("a  {% if true %}  b {% endif %}  \n  {#c#}\nx\n"));
}

TEST(TemplateWhitespace, DashAndPlusModifiers) {
  EXPECT_EQ("xy1", render("{{- \"x\" -}}  \n {{ \"y\" }}\n\n {%- set a = 1 %}\n{{ a }}\n"));
  EXPECT_EQ("no", render("{%- if x -%}\n  yes\n{%- else -%}\n  no\n{%- endif -%}\n", R"({"x":0})"));
  EXPECT_EQ("ae \n  f\ng", render("a\n {%- if 1 -%} \n e \n{%+ if 1 %}  f{% endif +%}\ng{% endif %}"));
  EXPECT_EQ("x\ny", render("{# comment #}\nx\n  {# c2 #}\ny"));
}

TEST(TemplateWhitespace, RawBlocks) { EXPECT_EQ("{{ not parsed }}", render("{% raw %}{{ not parsed }}{% endraw %}")); }

TEST(TemplateLoops, LoopVariables) {
  EXPECT_EQ("1/2:2 True False 2 1 2/2:3 False True 1 0 ",
            render("{% for x in xs if x > 1 %}{{loop.index}}/{{loop.length}}:{{x}} {{loop.first}} {{loop.last}} "
                   "{{loop.revindex}} {{loop.revindex0}} {% else %}none{% endfor %}",
                   R"({"xs":[1,2,3]})"));
  EXPECT_EQ("a=1,b=[1, 2]", render("{% for k, v in d.items() %}{{k}}={{v}}{{ ',' if not loop.last }}{% endfor %}",
                                   R"({"d":{"a":1,"b":[1,2]}})"));
  EXPECT_EQ("empty", render("{% for x in [] %}a{% else %}empty{% endfor %}"));
  EXPECT_EQ("02", render("{% for i in range(5) %}{% if i == 1 %}{% continue %}{% endif %}{% if i == 3 %}{% break %}"
                         "{% endif %}{{i}}{% endfor %}"));
  EXPECT_EQ("[0][0]0", render("{% for i in [1,2] %}[{{ x }}]{% set x = i %}{% endfor %}{{x}}", R"({"x":0})"));
  EXPECT_EQ("a-b-a", render("{% for i in range(3) %}{{ loop.cycle('a', 'b') }}{{ '-' if not loop.last }}{% endfor %}"));
}

TEST(TemplateUndefined, Jinja2Semantics) {
  EXPECT_EQ("empty", render("{% for x in u %}a{% else %}empty{% endfor %}"));
  EXPECT_EQ("ok", render("{% for t in m.tool_calls %}x{% endfor %}ok", R"({"m":{"role":"user"}})"));
  EXPECT_EQ("||False", render("{{ m.content }}|{{ m['content'] }}|{{ m.tool_calls is defined }}", R"({"m":{}})"));
  EXPECT_EQ("0 x False", render("{{ u | length }} {{ u ~ 'x' }} {{ 'a' in u }}"));
  EXPECT_EQ("|False", render("{{ n.a }}|{{ n.a is defined }}", R"({"n":null})"));
  EXPECT_EQ("ERROR: 'u' is undefined (line 1, column 5)", render("{{ u.x }}"));
  EXPECT_EQ(0u, render("{{ u + 'x' }}").rfind("ERROR: 'u' is undefined", 0));
  EXPECT_EQ("d d  e", render("{{ u|default('d') }} {{ ''|default('d', true) }} {{ ''|d('x') }} {{ u|d('e') }}"));
}

TEST(TemplatePrinting, PythonStr) {
  EXPECT_EQ("1.0 1e+16 1.5e-07 None True [1, 'a', None] {'a': (1, 2)}",
            render("{{ 1.0 }} {{ 1e16 }} {{ 1.5e-7 }} {{ none }} {{ true }} {{ [1,\"a\",none] }} {{ {\"a\":(1,2)} }}"));
  EXPECT_EQ("0.30000000000000004 0.3333333333333333 1e+100 1.2345678901234568e+17 0.0001 1e-05 -0.0",
            render("{{ 0.1 + 0.2 }} {{ 1/3 }} {{ 1e100 }} {{ 123456789012345678.0 }} {{ 0.0001 }} {{ 0.00001 }} {{ -0.0 }}"));
  EXPECT_EQ("[1, \"it's\", 'q\"', '\\n']", render("{{ [1, \"it's\", 'q\"', '\\n'] }}"));
  EXPECT_EQ("2.0 1", render("{{ x }} {{ y }}", R"({"x":2.0,"y":1})"));
}

TEST(TemplateExpressions, Arithmetic) {
  EXPECT_EQ("(1,) 1.5 2.0 3 2 1024 -4 3.0 0.5", render("{{ (1,) }} {{ 3/2 }} {{ 4/2 }} {{ 7//2 }} {{ -7 % 3 }} {{ 2**10 }} "
                                                       "{{ -7 // 2 }} {{ 7.5 // 2 }} {{ -7.5 % 2 }}"));
  EXPECT_EQ("2 abab [1, 1] [1, 2] -3 False", render("{{ 1 + true }} {{ 2 * 'ab' }} {{ [1] * 2 }} {{ [1] + [2] }} {{ -x }} "
                                                    "{{ not x }}",
                                                    R"({"x":3})"));
  EXPECT_EQ("ERROR: can only concatenate str (not \"int\") to str (line 1, column 9)", render("{{ 'ab' + 1 }}"));
  EXPECT_EQ("True True True True True True True True", render("{{ 1 == 1.0 }} {{ true == 1 }} {{ 'a' < 'b' }} {{ [1,2] == [1,2] }} "
                                                             "{{ 1 < 2 < 3 }} {{ 'a' not in 'bc' }} {{ 2 in [1,2] }} {{ 'k' in {'k':1} }}"));
  EXPECT_EQ("|1|b", render("{{ 1 if false }}|{{ 1 if true else 2 }}|{{ 'a' if 0 else 'b' if 1 else 'c' }}"));
}

TEST(TemplateExpressions, SlicingAndIndexing) {
  EXPECT_EQ("o.l.l.é.h. él [3, 4] [1, 3] c |",
            render("{% for x in 'héllo'[::-1] %}{{x}}.{% endfor %} {{ 'héllo'[1:3] }} {{ [1,2,3,4][-2:] }} "
                   "{{ [1,2,3][::2] }} {{ 'abc'[-1] }} {{ [1,2,3][5] }}|"));
  EXPECT_EQ("b", render("{{ messages[0].content.split('</think>')[-1].lstrip() }}",
                        R"({"messages":[{"content":"a</think>  b"}]})"));
  EXPECT_EQ("(2, 1) [] e", render("{{ (1, 2)[::-1] }} {{ [1, 2][5:] }} {{ 'abcde'[-1:-9:-9] }}"));
  EXPECT_EQ(0u, render("{{ [1, 2][::0] }}").rfind("ERROR: slice step cannot be zero", 0));
  EXPECT_EQ(0u, render("{{ 5[1:] }}").rfind("ERROR: 'int' object is not subscriptable", 0));
  EXPECT_EQ(0u, render("{{ [1, 2]['a':] }}").rfind("ERROR: slice indices must be integers or None", 0));
}

TEST(TemplateNamespace, AttributeAssignmentOutlivesLoop) {
  EXPECT_EQ("4 x", render("{% set ns = namespace(a=1, b='x') %}{% for i in range(3) %}{% set ns.a = ns.a + i %}"
                          "{% endfor %}{{ ns.a }} {{ ns.b }}"));
  EXPECT_EQ(0u, render("{% set d = 1 %}{% set d.a = 2 %}").rfind("ERROR: cannot assign attribute on non-namespace", 0));
}

TEST(TemplateMethods, StringsAndDicts) {
  EXPECT_EQ("['a', 'b', '', 'c'] ['a', 'b'] ['a', 'b c']",
            render("{{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} {{ 'a b c'.split(' ', 1) }}"));
  EXPECT_EQ("x|a|ab\n|ab", render("{{ '  x  '.strip() }}|{{ 'xxaxx'.strip('x') }}|{{ '\\n\\nab\\n'.lstrip('\\n') }}|"
                                  "{{ 'ab '.rstrip() }}"));
  EXPECT_EQ("True True bba ABC abc", render("{{ 'abc'.startswith('a') }} {{ 'abc'.endswith(('x','c')) }} "
                                            "{{ 'aaa'.replace('a','b',2) }} {{ 'AbC'.upper() }} {{ 'AbC'.lower() }}"));
  EXPECT_EQ("1 None 5 ['a'] [1]", render("{{ d.get('a') }} {{ d.get('z') }} {{ d.get('z', 5) }} {{ d.keys()|list }} "
                                         "{{ d.values()|list }}",
                                         R"({"d":{"a":1}})"));
  EXPECT_EQ("SS ǆ Éa Hello World", render("{{ 'ß'.upper() }} {{ 'ǅ'.lower() }} {{ 'éa'.capitalize() }} {{ 'hello world'.title() }}"));
  EXPECT_EQ("1 and n", render("{{ '{} and {name}'.format(1, name='n') }}"));
}

TEST(TemplateFilters, Common) {
  EXPECT_EQ("Hello World-Foo Hello", render("{{ 'hello world-foo'|title }} {{ 'hELLO'|capitalize }}"));
  EXPECT_EQ("[3, 1] ['a']", render("{{ [3,1,3]|unique|list }} {{ 'aA'|list|unique|list }}"));
  EXPECT_EQ("1, 2, 3 a b [2, 1] cba ['a', 'b', 'c']",
            render("{{ [1,2,3]|join(', ') }} {{ ['a','b']|first }} {{ ['a','b']|last }} {{ [1,2]|reverse|list }} "
                   "{{ 'abc'|reverse }} {{ 'abc'|list }}"));
  EXPECT_EQ("[1, 0] [{'n': 1}] [{'n': 0}] [1, 3] [1, 3]",
            render("{{ xs|map(attribute='n')|list }} {{ xs|selectattr('n','equalto',1)|list }} {{ xs|rejectattr('n')|list }} "
                   "{{ [1,2,3,4]|select('odd')|list }} {{ [1,2,3,4]|reject('even')|list }}",
                   R"({"xs":[{"n":1},{"n":0}]})"));
  EXPECT_EQ("a\n  b\n\n  c|  a\n  b|a\n  \n  b",
            render("{{ 'a\\nb\\n\\nc'|indent(2) }}|{{ 'a\\nb'|indent(2, true) }}|{{ 'a\\n\\nb'|indent(2, blank=true) }}"));
  EXPECT_EQ("&lt;a href=&#39;x&#39;&gt;&amp; <b>", render("{{ \"<a href='x'>&\"|e }} {{ '<b>'|safe }}"));
  EXPECT_EQ("4 3 0 2.5 3.0 12", render("{{ '3'|int + 1 }} {{ '3.7'|int }} {{ 'x'|int }} {{ '2.5'|float }} {{ 3|float }} "
                                       "{{ 1|string ~ 2 }}"));
  EXPECT_EQ("2 5 1 1", render("{{ '%s'|length }} {{ 'héllo'|length }} {{ {'a':1}|length }} {{ [1]|count }}"));
  EXPECT_EQ("helloHELLOa|a|bbb", render("{{ 'Hello'|lower }}{{ 'Hello'|upper }}{{ '  a '|trim }}|{{ 'xax'|trim('x') }}|"
                                        "{{ 'aaa'|replace('a','b') }}"));
  EXPECT_EQ("[1, 2, 3] ['A', 'b', 'c'] [3, 2, 1] 6 5 1",
            render("{{ [3,1,2]|sort }} {{ ['b','A','c']|sort }} {{ [3,1,2]|sort(reverse=true) }} {{ [1,2,3]|sum }} "
                   "{{ [1,5,2]|max }} {{ [4,1]|min }}"));
  EXPECT_EQ("[('b', 1), ('a', 2)] [('a', 2), ('b', 1)]", render("{{ d|items|list }} {{ d|dictsort }}", R"({"d":{"b":1,"a":2}})"));
}

TEST(TemplateFilters, ToJsonMatchesPythonJsonDumps) {
  EXPECT_EQ(R"({"a": [1, 2.0, "é\n\"\\\u0001"], "b": null, "c": true})",
            render("{{ x|tojson }}", R"({"x":{"a":[1,2.0,"é\n\"\\\u0001"],"b":null,"c":true}})"));
  EXPECT_EQ("{\n  \"a\": [\n    1,\n    2.0,\n    {}\n  ],\n  \"b\": []\n}",
            render("{{ x|tojson(indent=2) }}", R"({"x":{"a":[1,2.0,{}],"b":[]}})"));
  EXPECT_EQ(R"({"a": 1, "b": 2})", render("{{ x|tojson(sort_keys=true) }}", R"({"x":{"b":2,"a":1}})"));
}

TEST(TemplateTests, IsTests) {
  EXPECT_EQ("True False True True True True True True True False True True True True",
            render("{{ x is defined }} {{ x is undefined }} {{ n is none }} {{ 's' is string }} {{ d is mapping }} "
                   "{{ [1] is iterable }} {{ 1 is number }} {{ [1] is sequence }} {{ true is true }} {{ 0 is false }} "
                   "{{ 2 is even }} {{ 3 is odd }} {{ u is sequence }} {{ u is iterable }}",
                   R"({"n":null,"d":{},"x":1})"));
  EXPECT_EQ("True False True True", render("{{ 10 is divisibleby 5 }} {{ 3 is divisibleby(2) }} {{ 3 is in [1,3] }} "
                                           "{{ none is sameas none }}"));
}

TEST(TemplateMacros, CallsWithDefaultsAndKeywords) {
  EXPECT_EQ("<1B><12><xy>", render("{% macro m(a, b='B') %}<{{a}}{{b}}>{% endmacro %}{{ m(1) }}{{ m(1, b=2) }}{{ m('x', 'y') }}"));
  EXPECT_EQ("[block 1]", render("{% set x %}block {{ 1 }}{% endset %}[{{ x }}]"));
  EXPECT_EQ("ab", render("{% generation %}a{% endgeneration %}b"));
}

TEST(TemplateStrings, LiteralEscapes) {
  EXPECT_EQ("éA\n\t\\ \\d|it's|ab", render("{{ '\\u00e9\\x41\\n\\t\\\\ \\d' }}|{{ 'it\\'s' }}|{{ 'a' 'b' }}"));
}

TEST(TemplateErrors, RaiseExceptionIsFlagged) {
  EXPECT_EQ("RAISED: bad role", render("{{ raise_exception('bad role') }}"));
  // Without a message (only a keyword, or an empty string) the error still says what happened.
  EXPECT_EQ("RAISED: the chat template raised an error without a message", render("{{ raise_exception(attribute='x') }}"));
  EXPECT_EQ("RAISED: the chat template raised an error without a message", render("{{ raise_exception('') }}"));
  // Other render errors are not flagged as raised by the template.
  EXPECT_EQ(0u, render("{% macro m() %}{% endmacro %}{% set m = 's' %}{{ m() }}").rfind("ERROR: 'str' object is not callable", 0));
}

TEST(TemplateErrors, UnsupportedConstructsRefusedAtCompile) {
  EXPECT_NE(std::string::npos, compile_error("{% include 'x' %}").find("unsupported tag 'include'"));
  EXPECT_NE(std::string::npos, compile_error("{{ x|wordwrap }}").find("unsupported filter 'wordwrap'"));
  EXPECT_NE(std::string::npos, compile_error("{{ x is foo }}").find("unsupported test 'foo'"));
  EXPECT_NE(std::string::npos, compile_error("{{ x.append(1) }}").find("unsupported method '.append()'"));
  EXPECT_NE(std::string::npos, compile_error("{{ lipsum() }}").find("unsupported function 'lipsum'"));
  EXPECT_NE(std::string::npos, compile_error("{% for x in y recursive %}{% endfor %}").find("recursive"));
  EXPECT_EQ(0u, compile_error("\n  {% if x %}").rfind("line 2, column 13: unexpected end of template", 0))
      << compile_error("\n  {% if x %}");
  EXPECT_EQ(0u, compile_error("{{ 'abc }}").rfind("line 1, column 4: unterminated string", 0));
  EXPECT_EQ("", compile_error("{% macro m() %}{% endmacro %}{{ m() }}"));
}

// ---- render limits (render_limits.hpp) ----

std::string render_limited(const std::string& src, const reprox::tmpl::RenderLimits& limits) {
  auto r = ChatTemplate::compile(src)->render(reprox::json::Value(reprox::json::Object{}), limits);
  if (auto* e = std::get_if<RenderError>(&r)) return "ERROR: " + e->message;
  return std::get<std::string>(r);
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

TEST(TemplateLimits, EmptyRepetitionIsImmediate) {
  // Used to loop 2^63 times appending nothing.
  EXPECT_EQ("|[]|()", render("{{ '' * 9223372036854775807 }}|{{ [] * 9223372036854775807 }}|{{ () * 5 }}"));
  EXPECT_EQ("abab", render("{{ 'ab' * 2 }}"));
}

TEST(TemplateLimits, StepBudgetStopsNestedLoops) {
  reprox::tmpl::RenderLimits limits;
  limits.max_steps = 100000;
  const std::string out =
      render_limited("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", limits);
  EXPECT_TRUE(starts_with(out, "ERROR: template exceeded its budget of 100000 evaluation steps")) << out;
}

TEST(TemplateLimits, BuiltStringsAndOutputAreBounded) {
  reprox::tmpl::RenderLimits limits;
  limits.max_bytes = 1000;
  EXPECT_TRUE(starts_with(render_limited("{{ 'x' * 1001 }}", limits), "ERROR: template built a string longer than 1000"));
  EXPECT_TRUE(starts_with(render_limited("{% set ns = namespace(s='x') %}{% for i in range(64) %}"
                                         "{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
                                         limits),
                          "ERROR: template built a string longer than 1000"));
  EXPECT_TRUE(starts_with(render_limited("{% for i in range(2000) %}x{% endfor %}", limits),
                          "ERROR: template output exceeds 1000 bytes"));
  EXPECT_EQ(std::string(1000, 'x'), render_limited("{% for i in range(1000) %}x{% endfor %}", limits));
}

TEST(TemplateLimits, ListsAndNestingAreBounded) {
  reprox::tmpl::RenderLimits limits;
  limits.max_items = 100;
  EXPECT_TRUE(starts_with(render_limited("{{ ([1] * 101)|length }}", limits),
                          "ERROR: template built a collection of more than 100 items"));
  const std::string deep = render("{% set ns = namespace(l=[]) %}{% for i in range(100000) %}"
                                  "{% set ns.l = [ns.l] %}{% endfor %}{{ ns.l }}");
  EXPECT_TRUE(starts_with(deep, "ERROR: template built a value nested more than 256 levels deep")) << deep;
}

TEST(TemplateLimits, RecursionAndDeepSyntaxEndWithAnError) {
  EXPECT_TRUE(starts_with(render("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"),
                          "ERROR: macro recursion too deep"));
  EXPECT_NE(std::string::npos,
            compile_error("{{ " + std::string(300, '(') + "1" + std::string(300, ')') + " }}").find("nested too deeply"));
  std::string chain = "{{ 1";
  for (int i = 0; i < 100000; ++i) chain += " + 1";
  EXPECT_NE(std::string::npos, compile_error(chain + " }}").find("nested too deeply"));
  EXPECT_EQ("", compile_error("{{ " + std::string(20, '(') + "1" + std::string(20, ')') + " }}"));
}

TEST(TemplateLimits, NamespaceCannotReachItself) {
  EXPECT_TRUE(starts_with(render("{% set ns = namespace() %}{% set ns.me = [ns] %}{{ ns }}"),
                          "ERROR: unsupported: a namespace attribute holding a namespace"));
  EXPECT_EQ("<Namespace {'a': [1]}>", render("{% set ns = namespace() %}{% set ns.a = [1] %}{{ ns }}"));
}

TEST(TemplateErrors, NumbersPastInt64AreErrorsNotExceptions) {
  // Each used to throw std::out_of_range out of compile() or render().
  EXPECT_NE(std::string::npos, compile_error("{{ m.99999999999999999999 }}").find("number literal out of range"));
  EXPECT_NE(std::string::npos, compile_error("{{ 99999999999999999999 }}").find("number literal out of range"));
  EXPECT_TRUE(starts_with(render("{{ '{99999999999999999999}'.format(1) }}"), "ERROR: str.format: no value for field"));
  EXPECT_EQ("[]", render("{{ xs|map(attribute='99999999999999999999')|select|list }}", R"({"xs":[[1]]})"));
}

TEST(TemplateLimits, AmplifyingFiltersAreBounded) {
  // Each used to allocate the whole result first (gigabytes).
  EXPECT_TRUE(starts_with(render("{{ 'a\nb'|indent(2000000000) }}"), "ERROR: indent result too large"));
  EXPECT_TRUE(starts_with(render("{{ ('x' * 1000)|replace('x', 'y' * 100000) }}"), "ERROR: replace result too large"));
  EXPECT_TRUE(starts_with(render("{{ ('x' * 1000).replace('x', 'y' * 100000) }}"), "ERROR: replace result too large"));
  EXPECT_TRUE(starts_with(render("{{ (['x'] * 1000)|join('y' * 100000) }}"), "ERROR: join result too large"));
  EXPECT_TRUE(starts_with(render("{{ ('y' * 100000).join(['x'] * 1000) }}"), "ERROR: join result too large"));
  EXPECT_TRUE(starts_with(render("{{ ('{0}' * 1000).format('y' * 100000) }}"), "ERROR: format result too large"));
  EXPECT_TRUE(starts_with(render("{{ (['y' * 100000] * 1000)|tojson }}"), "ERROR: tojson: result too large"));
  EXPECT_EQ("  a\n  b", render("{{ 'a\nb'|indent(2, true) }}"));
  EXPECT_EQ("[\n  1\n]", render("{{ [1]|tojson(indent=2) }}"));
}

TEST(TemplateLimits, HugeSliceStepDoesNotOverflow) {
  EXPECT_EQ("c", render("{{ 'abc'[2::9223372036854775807] }}"));
  EXPECT_EQ("[3]", render("{{ [1, 2, 3][2::9223372036854775807] }}"));
}

}  // namespace
