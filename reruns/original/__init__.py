"""The authors' released code under the harness: a checkout the user names (``checkout``), one of its
prompting classes run unmodified in a child process of its own (``_child``), every model call and every
sample-I/O evaluation it makes answered by the harness over a pipe (``runner``)."""
