"""Memory parsers on real wordings (seed 002's 2.4/2.6 lines; a 5.10 and a 6.12
line from this project's QEMU boots)."""

import pytest

from bringup.parse import meminfo


def test_2_4_memory_line():
    m = meminfo.parse_memory_line("Memory: 13396k available (892k kernel code, 252k data, 52k init, 0k highmem)")
    assert m["wording"] == "2.4" and m["available_kb"] == 13396 and m["total_kb"] is None
    assert m["kernel_code_data_kb"] == 1144  # seed 002's "Kernel Code + Data" for 2.4.25


def test_2_6_memory_line():
    m = meminfo.parse_memory_line(
        "[    0.000000] Memory: 110260k/122368k available (2095k kernel code, "
        "11496k reserved, 591k data, 332k init, 0k highmem)"
    )
    assert m["wording"] == "2.6" and m["total_kb"] == 122368
    assert m["kernel_code_data_kb"] == 2095 + 591 and m["reserved_kb"] == 11496


def test_modern_memory_line():
    line = (
        "[    0.000000] Memory: 505660K/524288K available (2048K kernel code, 394K rwdata, 540K rodata, "
        "1024K init, 183K bss, 18160K reserved, 0K cma-reserved)"
    )
    m = meminfo.parse_memory_line("noise\r\n" + line + "\nmore")
    assert m["wording"] == "modern" and m["available_kb"] == 505660 and m["total_kb"] == 524288
    assert m["line"] == 2 and m["text"] == line, "the line number in the text, and the line"
    assert m["kernel_code_data_kb"] == 2048 + 394 + 540
    assert m["bss_kb"] == 183 and m["parts_kb"]["cma-reserved"] == 0


def test_no_memory_line():
    assert meminfo.parse_memory_line("Linux version 6.1\n") is None


def test_free_busybox_and_old_procps():
    bb = (
        "              total        used        free      shared  buff/cache   available\n"
        "Mem:         505660        9876      480000         884       15784      481000\n"
        "Swap:             0           0           0\n"
    )
    f = meminfo.parse_free(bb)
    assert f["total_kb"] == 505660 and f["free_kb"] == 480000 and f["available_kb"] == 481000
    old = (
        "             total       used       free     shared    buffers\n"
        "  Mem:        15032       7112       7920          0        108\n"
        " Swap:            0          0          0\n"
        "Total:        15032       7112       7920\n"
    )
    f = meminfo.parse_free(old)
    assert f["total_kb"] == 15032 and f["free_kb"] == 7920 and f["available_kb"] is None


def test_meminfo():
    m = meminfo.parse_meminfo(
        "MemTotal:         505660 kB\nMemFree:          480000 kB\n"
        "MemAvailable:     481000 kB\nActive(anon):       100 kB\n"
    )
    assert m == {"MemTotal": 505660, "MemFree": 480000, "MemAvailable": 481000, "Active(anon)": 100}


@pytest.mark.parametrize(
    "text,kb,completed",
    [
        (
            "mem_eat: total = 1048576 = 1024kB\nmem_eat: total = 2097152 = 2048kB\n[  9.1] Out of memory: Killed "
            "process 71 (mem_eat)\n",
            2048,
            False,
        ),
        ("mem_eat: total = 9240576 = 9024kB\nGot total = 9240576 = 9024kB\n", 9024, True),
        # seed 002, 2.4.25 on the TQM860L
        (
            "# ./mem_eat\n...\nGot total = 9240576 = 9024kB\n__alloc_pages: 0-order allocation failed (gfp=0x1d2/0)\n"
            "VM: killing process mem_eat\n",
            9024,
            True,
        ),
    ],
)
def test_mem_eat(text, kb, completed):
    r = meminfo.parse_mem_eat(text)
    assert r["kb"] == kb and r["completed"] is completed
    assert meminfo.parse_mem_eat("nothing") is None
