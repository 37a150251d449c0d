"""The node gate (gate; expectations.toml), its export to Prometheus (prometheus, pushgateway), and the
fleet: the one bad GPU among many nodes' runs (fleet, render).

Nothing is imported here: gpu-bench-gate and gpu-bench-export take gate, expectations and prometheus from
this folder without loading the fleet's analysis or the history's database."""
