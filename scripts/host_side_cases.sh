# Sourced by probe_host_side.sh and aa_host_side.sh: the 113 cases the host drives that both run.
# shellcheck shell=bash disable=SC2034
host_side_filter='^(SyncPlacement|Events|Launch|SmallCopy)/|^Alloc/.*bytes:1048576/|^HostBlocking/.*bytes:(65536|1048576)/|^Batch/.*copies:(1|64)/|^Transfer/dir:(h2d|d2h)/mem:(pageable|managed_prefetch|managed_fault)/bytes:(1048576|16777216|268435456)/'
