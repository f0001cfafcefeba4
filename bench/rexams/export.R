# Used by bench/run.py: Rscript export.R FORMAT N OUTDIR — the two exercises, N variants each.
args <- commandArgs(trailingOnly = TRUE)
suppressPackageStartupMessages(library(exams))
here <- dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)))
files <- file.path(here, c("softmax_weight.Rmd", "param_count.Rmd"))
n <- as.integer(args[2])
out <- args[3]
set.seed(2026)
invisible(switch(args[1],
  moodle = exams2moodle(files, n = n, dir = out, name = "rexams", verbose = FALSE),
  qti = exams2qti21(files, n = n, dir = out, name = "rexams", verbose = FALSE),
  html = exams2html(files, n = n, dir = out, name = "rexams", verbose = FALSE)
))
