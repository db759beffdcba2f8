"""The execution boundary: run candidate code against tests in confined child processes."""

from reruns.sandbox.executor import execute
from reruns.sandbox.judge import Verdict, judge_hidden, judge_many, run_visible
from reruns.sandbox.pool import SandboxPool
from reruns.sandbox.program import assemble_program
from reruns.sandbox.result import STATUSES, ExecutionResult, SandboxLimits, TestResult

__all__ = ["STATUSES", "ExecutionResult", "SandboxLimits", "SandboxPool", "TestResult", "Verdict",
           "assemble_program", "execute", "judge_hidden", "judge_many", "run_visible"]
