"""The completion rule: whole programs vs continuations of the prompt."""

from sotacheck.reruns.sandbox.completion import assemble_program, is_whole_program, prompt_preamble

PROMPT = ('from typing import List\nimport math\n\n\ndef helper(x):\n    return x\n\n\n'
          'def target(xs: List[int]) -> int:\n    """Sum."""\n')


def test_indented_completion_continues_the_prompt() -> None:
    assert not is_whole_program("\n    return sum(xs)\n")
    assert assemble_program(PROMPT, "    return sum(xs)\n", "target") == PROMPT + "    return sum(xs)\n\n"


def test_whole_program_gets_the_prompt_preamble_but_not_the_stub() -> None:
    completion = "# comment\ndef target(xs):\n    return helper(sum(xs))\n"
    assert is_whole_program(completion)
    program = assemble_program(PROMPT, completion, "target")
    assert "from typing import List" in program and "def helper" in program
    assert '"""Sum."""' not in program
    assert program.endswith(completion + "\n")


def test_preamble_of_unparsable_prompt_is_empty() -> None:
    assert prompt_preamble("def broken(:\n", "broken") == ""
