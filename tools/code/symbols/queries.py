"""The query that finds a language's definitions: the grammar package's own `tags.scm`
(only its `@definition.*` patterns: references are found otherwise) followed by the
patterns it lacks, written here. TypeScript and TSX take JavaScript's tags too, as their
grammars extend JavaScript's. Markdown ships no tags query: its headings are the pattern.

Every pattern captures the definition's node as `@definition.<hint>` and its name as
`@name` (a heading has none). The hint is the tags vocabulary (class, function, method,
...); the family's function decides the kind from the node itself.
"""

from __future__ import annotations

import importlib.resources
from typing import TYPE_CHECKING

from chorus_tools.tools.code.languages import parser

if TYPE_CHECKING:
    from tree_sitter import Query

_TAGS = {  # grammar -> the packages whose queries/tags.scm it takes, in order
    "python": ("tree_sitter_python",), "javascript": ("tree_sitter_javascript",),
    "typescript": ("tree_sitter_javascript", "tree_sitter_typescript"),
    "tsx": ("tree_sitter_javascript", "tree_sitter_typescript"),
    "go": ("tree_sitter_go",), "rust": ("tree_sitter_rust",), "java": ("tree_sitter_java",),
    "c": ("tree_sitter_c",), "cpp": ("tree_sitter_cpp",), "markdown": (),
}

_PY = """
(class_definition body: (block (expression_statement
  (assignment left: (identifier) @name) @definition.field)))
(module (expression_statement (assignment left: [
  (pattern_list [(identifier) @name (list_splat_pattern (identifier) @name)])
  (tuple_pattern [(identifier) @name (list_splat_pattern (identifier) @name)])
  (list_pattern [(identifier) @name (list_splat_pattern (identifier) @name)])])
  @definition.constant))
(module (expression_statement (assignment right: (assignment left: (identifier) @name)
  @definition.constant)))
(module (expression_statement (assignment right: (assignment right: (assignment
  left: (identifier) @name) @definition.constant))))
"""

_JS = """
(method_definition name: (_) @name) @definition.method
(field_definition property: (_) @name) @definition.field
(variable_declarator name: (identifier) @name value: (generator_function)) @definition.function
(assignment_expression left: [(identifier) @name (member_expression property:
  (property_identifier) @name)] right: (generator_function)) @definition.function
(pair key: (property_identifier) @name value: (generator_function)) @definition.function
(program (lexical_declaration (variable_declarator name: (identifier) @name) @definition.variable))
(program (variable_declaration (variable_declarator name: (identifier) @name) @definition.variable))
(program (export_statement declaration: (lexical_declaration
  (variable_declarator name: (identifier) @name) @definition.variable)))
(program (export_statement declaration: (variable_declaration
  (variable_declarator name: (identifier) @name) @definition.variable)))
"""

_TS = _JS.replace("(field_definition property:", "(public_field_definition name:") + """
(class_declaration name: (type_identifier) @name) @definition.class
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.enum
(internal_module name: (_) @name) @definition.module
(interface_body (property_signature name: (property_identifier) @name) @definition.field)
(construct_signature "new" @name) @definition.method
(ambient_declaration (variable_declaration
  (variable_declarator name: (identifier) @name) @definition.variable))
(program (ambient_declaration (lexical_declaration
  (variable_declarator name: (identifier) @name) @definition.variable)))
"""

_GO = """
(type_alias name: (type_identifier) @name) @definition.type
(method_elem name: (field_identifier) @name) @definition.method
(field_declaration name: (field_identifier) @name) @definition.field
(source_file (const_declaration (const_spec name: (identifier) @name) @definition.constant))
(source_file (var_declaration (var_spec name: (identifier) @name) @definition.variable))
(source_file (var_declaration (var_spec_list (var_spec name: (identifier) @name)
  @definition.variable)))
"""

_RUST = """
(impl_item type: (_) @name) @definition.impl
(function_signature_item name: (identifier) @name) @definition.function
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.variable
(associated_type name: (type_identifier) @name) @definition.type
(struct_item body: (field_declaration_list
  (field_declaration name: (field_identifier) @name) @definition.field))
(union_item body: (field_declaration_list
  (field_declaration name: (field_identifier) @name) @definition.field))
"""

_JAVA = """
(enum_declaration name: (identifier) @name) @definition.enum
(record_declaration name: (identifier) @name) @definition.class
(annotation_type_declaration name: (identifier) @name) @definition.interface
(constructor_declaration name: (identifier) @name) @definition.constructor
(compact_constructor_declaration name: (identifier) @name) @definition.constructor
(annotation_type_element_declaration name: (identifier) @name) @definition.method
(field_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.field
(constant_declaration declarator: (variable_declarator name: (identifier) @name))
  @definition.constant
"""

_C = """
(struct_specifier name: (_) @name body: (_)) @definition.class
(union_specifier name: (_) @name body: (_)) @definition.class
(enum_specifier name: (_) @name body: (_)) @definition.enum
(type_definition) @definition.type
(preproc_def name: (identifier) @name) @definition.macro
(preproc_function_def name: (identifier) @name) @definition.macro
(field_declaration_list (field_declaration) @definition.field)
(translation_unit (declaration) @definition.variable)
(preproc_ifdef (declaration) @definition.variable)
(preproc_if (declaration) @definition.variable)
(preproc_else (declaration) @definition.variable)
(preproc_elif (declaration) @definition.variable)
(function_declarator declarator: (_) @name) @definition.function
"""

_CPP = _C + """
(class_specifier name: (_) @name body: (_)) @definition.class
(namespace_definition name: (_) @name) @definition.module
(alias_declaration name: (type_identifier) @name) @definition.type
(operator_cast) @definition.function
(declaration_list (declaration) @definition.variable)
(field_declaration_list (declaration) @definition.method)
(field_declaration_list (function_definition) @definition.method)
(field_declaration_list (template_declaration (function_definition) @definition.method))
"""

_MARKDOWN = """
(atx_heading) @definition.heading
(setext_heading) @definition.heading
"""

_EXTRA = {"python": _PY, "javascript": _JS, "typescript": _TS, "tsx": _TS, "go": _GO,
          "rust": _RUST, "java": _JAVA, "c": _C, "cpp": _CPP, "markdown": _MARKDOWN}

_compiled: dict[str, Query] = {}
_sources: dict[str, str] = {}


def definitions(grammar: str) -> Query:
    """The compiled definitions query of a grammar, made on first use."""
    found = _compiled.get(grammar)
    if found is None:
        from tree_sitter import Query
        language = parser(grammar).language
        assert language is not None
        said = source(grammar)
        found = _compiled[grammar] = Query(language, said)
        _keep_definitions(found, said.encode())
    return found


def source(grammar: str) -> str:
    """The text the definitions query of a grammar is compiled from (read once: a worker
    in its Landlock domain cannot read the grammar packages' tags.scm)."""
    found = _sources.get(grammar)
    if found is None:
        found = _sources[grammar] = "\n".join([*(_tags(package) for package in _TAGS[grammar]),
                                                _EXTRA[grammar]])
    return found


def preload() -> None:
    """Read and compile every query now (before a privilege drop or a Landlock domain)."""
    for grammar in _TAGS:
        definitions(grammar)


def _tags(package: str) -> str:
    return importlib.resources.files(package).joinpath("queries", "tags.scm").read_text()


def definition_patterns(grammar: str) -> list[tuple[int, str]]:
    """The patterns of the definitions query that capture a definition: (index, text)."""
    query, said = definitions(grammar), source(grammar).encode()
    texts = [said[query.start_byte_for_pattern(p):query.end_byte_for_pattern(p)]
             for p in range(query.pattern_count)]
    return [(p, text.decode()) for p, text in enumerate(texts) if b"@definition." in text]


def _keep_definitions(query: Query, source: bytes) -> None:
    """Disable the patterns that capture no definition (tags.scm's references)."""
    for pattern in range(query.pattern_count):
        text = source[query.start_byte_for_pattern(pattern):query.end_byte_for_pattern(pattern)]
        if b"@definition." not in text:
            query.disable_pattern(pattern)
