"""The paper's experiments, one module each, in the order REPORT.md shows
them. A module holds what its section needs and nothing else:

  FILES         the result files (in results/) it reads, written by make demo
  PAPER         the paper's numbers it compares with, each with its source
  render(res, results_dir) -> (markdown lines, claims)
                res maps a result file's name without ".json" to its parsed
                content (missing files are absent); a claim is
                (claim, paper, ours, verdict)

Adding an experiment adds a module here and its name to SECTIONS.
"""

from . import (bloat, churn, containers, fairness, modeled_promotion, modeled_tlb, native_tlb, order,
               prezero, promotion, sampling, table1, table9)

SECTIONS = (table1, churn, prezero, bloat, containers, promotion, fairness, order, table9, native_tlb,
            modeled_tlb, modeled_promotion, sampling)
