"""Which column of an lmbench summary table is which measurement: the sections and
their groups, the host parameters, the header words of each column mapped to the
benchmark and metric names bringup's own runs use, and lmbench 3's columns.  Data
tables for parse/lmbench_summary.py; pure."""

from __future__ import annotations

import re

# section title (its start, lower case) -> (kind, group of bringup's lmbench set)
SECTIONS = [
    ("basic system parameters", "params", ""),
    ("processor, processes", "proc", "Processor, Processes"),
    ("basic integer operations", "ops", "Basic integer and float operations"),
    ("basic uint64 operations", "ops", "Basic integer and float operations"),
    ("basic int64 operations", "ops", "Basic integer and float operations"),
    ("basic float operations", "ops", "Basic integer and float operations"),
    ("basic double operations", "ops", "Basic integer and float operations"),
    ("context switching", "ctx", "Context switching"),
    ("*local* communication latencies", "lat", "Local communication latencies"),
    ("*remote* communication latencies", "rlat", "Remote communication latencies"),
    ("file & vm system latencies", "fs", "File & VM system latencies"),
    ("*local* communication bandwidths", "bw", "Local communication bandwidths"),
    ("*remote* communication bandwidths", "rbw", "Remote communication bandwidths"),
    ("memory latencies", "mem", "Memory latencies"),
]

# host properties rather than measurements: header (lower case) -> key
PARAMS = {
    "mhz": "mhz",
    "description": "description",
    "tlb pages": "tlb_pages",
    "cache line bytes": "cache_line_bytes",
    "mem par": "mem_par",
    "scal load": "scal_load",
    "guesses": "guesses",
}
TEXT_COLUMNS = {"description", "guesses"}

# (section kind, header in lower case) -> (benchmark, metric name); names as bringup's runs print them
METRICS: dict[tuple[str, str], tuple[str, str]] = {
    ("proc", "null call"): ("lat_syscall_null", "Simple syscall"),
    ("proc", "null syscall"): ("lat_syscall_null", "Simple syscall"),
    ("proc", "null i/o"): ("lat_syscall_rw", "Simple read/write (mean of the two)"),
    ("proc", "stat"): ("lat_syscall_stat", "Simple stat"),
    ("proc", "open clos"): ("lat_syscall_open", "Simple open/close"),
    ("proc", "selct"): ("lat_select", "Select latency (lmbench 1.x)"),
    ("proc", "selct tcp"): ("lat_select_tcp", "Select on 100 tcp fd's"),
    ("proc", "slct tcp"): ("lat_select_tcp", "Select on 100 tcp fd's"),
    ("proc", "sig inst"): ("lat_sig_install", "Signal handler installation"),
    ("proc", "sig hndl"): ("lat_sig_catch", "Signal handler overhead"),
    ("proc", "fork proc"): ("lat_proc_fork", "Process fork+exit"),
    ("proc", "null process"): ("lat_proc_fork", "Process fork+exit"),
    ("proc", "exec proc"): ("lat_proc_exec", "Process fork+execve"),
    ("proc", "fork process"): ("lat_proc_fork", "Process fork+exit"),
    ("proc", "execve process"): ("lat_proc_exec", "Process fork+execve"),
    ("proc", "simple process"): ("lat_proc_exec", "Process fork+execve"),
    ("proc", "sh proc"): ("lat_proc_shell", "Process fork+/bin/sh -c"),
    ("proc", "/bin/sh process"): ("lat_proc_shell", "Process fork+/bin/sh -c"),
    ("proc", "mmap lat"): ("lat_mmap", "Mmap latency"),
    ("proc", "2-proc ctxsw"): ("lat_ctx", "2-process context switch (lmbench 1.0)"),
    ("proc", "8-proc ctxsw"): ("lat_ctx", "8-process context switch (lmbench 1.0)"),
    ("lat", "pipe"): ("lat_pipe", "Pipe latency"),
    ("lat", "af unix"): ("lat_unix", "AF_UNIX sock stream latency"),
    ("lat", "udp"): ("lat_udp", "UDP latency using localhost"),
    ("lat", "rpc/ udp"): ("lat_rpc_udp", "RPC/udp latency using localhost"),
    ("lat", "rpc/udp"): ("lat_rpc_udp", "RPC/udp latency using localhost"),
    ("lat", "tcp"): ("lat_tcp", "TCP latency using localhost"),
    ("lat", "rpc/ tcp"): ("lat_rpc_tcp", "RPC/tcp latency using localhost"),
    ("lat", "rpc/tcp"): ("lat_rpc_tcp", "RPC/tcp latency using localhost"),
    ("lat", "tcp conn"): ("lat_connect", "TCP/IP connection cost to localhost"),
    ("fs", "0k file create"): ("lat_fs", "0K file create"),
    ("fs", "0k file delete"): ("lat_fs", "0K file delete"),
    ("fs", "10k file create"): ("lat_fs", "10K file create"),
    ("fs", "10k file delete"): ("lat_fs", "10K file delete"),
    ("fs", "mmap latency"): ("lat_mmap", "Mmap latency"),
    ("fs", "prot fault"): ("lat_sig_prot", "Protection fault"),
    ("fs", "page fault"): ("lat_pagefault", "Page fault"),
    ("fs", "100fd selct"): ("lat_select", "Select on 100 fd's"),
    ("bw", "pipe"): ("bw_pipe", "Pipe bandwidth"),
    ("bw", "af unix"): ("bw_unix", "AF_UNIX sock stream bandwidth"),
    ("bw", "tcp"): ("bw_tcp", "TCP bandwidth"),
    ("bw", "file reread"): ("bw_file_rd", "File reread bandwidth"),
    ("bw", "mmap reread"): ("bw_mmap_rd", "Mmap reread bandwidth"),
    ("bw", "bcopy (libc)"): ("bw_mem_bcopy", "Bcopy (libc) bandwidth"),
    ("bw", "bcopy (hand)"): ("bw_mem_fcp", "Bcopy (hand) bandwidth"),
    ("bw", "mem read"): ("bw_mem_rd", "Mem read bandwidth"),
    ("bw", "mem write"): ("bw_mem_wr", "Mem write bandwidth"),
    ("mem", "l1 $"): ("lat_mem_rd", "L1 cache latency"),
    ("mem", "l2 $"): ("lat_mem_rd", "L2 cache latency"),
    ("mem", "main mem"): ("lat_mem_rd", "Main memory latency"),
    ("mem", "rand mem"): ("lat_mem_rd", "Random memory latency"),
    ("mem", "tlb"): ("lat_mem_rd", "TLB miss latency"),
    ("ops", "int64 add"): ("lat_ops", "uint64 add"),  # lat_ops prints "uint64 add", the summary "int64 add"
}
# the group of a benchmark wherever a summary shows it: that of bringup's own set
# (configs/lmbench.toml) and of raw output (lmbench.py); the bandwidths the summary puts
# under local communication are memory bandwidths there
GROUP_OF = {
    "bw_mem_bcopy": "Memory",
    "bw_mem_fcp": "Memory",
    "bw_mem_rd": "Memory",
    "bw_mem_wr": "Memory",
    "lat_mmap": "File & VM system latencies",
    "lat_ctx": "Context switching",
    "lat_select": "File & VM system latencies",
}
# lmbench 3's columns after Host and OS in each section, for a converted table whose
# header cells were split or merged differently from its rows' values
LMBENCH3_COLUMNS = {
    "proc": ["Mhz", "null call", "null I/O", "stat", "open clos", "slct TCP", "sig inst", "sig hndl"]
    + ["fork proc", "exec proc", "sh proc"],
    "ctx": ["2p/0K ctxsw", "2p/16K ctxsw", "2p/64K ctxsw", "8p/16K ctxsw", "8p/64K ctxsw", "16p/16K ctxsw"]
    + ["16p/64K ctxsw"],
    "lat": ["2p/0K ctxsw", "Pipe", "AF UNIX", "UDP", "RPC/ UDP", "TCP", "RPC/ TCP", "TCP conn"],
    "fs": ["0K File Create", "0K File Delete", "10K File Create", "10K File Delete", "Mmap Latency", "Prot Fault"]
    + ["Page Fault", "100fd selct"],
    "bw": ["Pipe", "AF UNIX", "TCP", "File reread", "Mmap reread", "Bcopy (libc)", "Bcopy (hand)", "Mem read"]
    + ["Mem write"],
    "mem": ["Mhz", "L1 $", "L2 $", "Main mem", "Rand mem", "Guesses"],
}
OPS_WORDS = {"intgr": "integer", "bogo": "bogomflops"}
CTX_RE = re.compile(r"^(\d+)p/(\d+)k ctxsw$")
