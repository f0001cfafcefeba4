"""The class plan: which items a class is asked, and per student (or LMS variant) a seed, a variant code
and questions; and the columns of the answers file a class fills in."""
