"""Reading gpu_bench files and their facts: names, cases, descriptors, machine and GPU facts, timelines.
The bottom of the tools: it imports no other subpackage. `load` is the one import for all of it."""
