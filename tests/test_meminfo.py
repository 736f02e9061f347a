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


# Every wording of mem_init()'s line, one per printk format in the kernel's history
# (arch/*/mm/init.c before 3.15, mm/page_alloc.c's mem_init_print_info() after).
@pytest.mark.parametrize(
    "line,want",
    [
        (  # 2.4/2.6 i386 (and MIPS, alpha, cris): total, reserved, highmem
            "Memory: 255300k/262080k available (1227k kernel code, 6396k reserved, 1040k data, 84k init, 0k highmem)",
            {
                "available_kb": 255300,
                "total_kb": 262080,
                "kernel_code_kb": 1227,
                "reserved_kb": 6396,
                "data_kb": 1040,
                "init_kb": 84,
                "highmem_kb": 0,
                "format": "kernel-code-data",
            },
        ),
        (  # 2.4 PowerPC: no total
            "Memory: 63264k available (1068k kernel code, 368k data, 60k init, 0k highmem)",
            {"available_kb": 63264, "total_kb": None, "kernel_code_kb": 1068, "data_kb": 368, "init_kb": 60},
        ),
        (  # 2.6 PowerPC: bss
            "Memory: 254484k/262144k available (3852k kernel code, 7412k reserved, 148k data, 146k bss, 188k init)",
            {"bss_kb": 146, "kernel_code_data_kb": 3852 + 148},
        ),
        (  # 2.6 x86_64: absent
            "Memory: 3460316k/4456448k available (5708k kernel code, 788356k absent, 207776k reserved, "
            "5382k data, 908k init)",
            {"absent_kb": 788356, "reserved_kb": 207776, "data_kb": 5382},
        ),
        (  # ARM 2.4-2.6.2x: KB, "code"
            "Memory: 63228KB available (1198K code, 290K data, 76K init)",
            {"available_kb": 63228, "kernel_code_kb": 1198, "data_kb": 290, "init_kb": 76, "format": "arm-code-data"},
        ),
        (  # ARM 2.6.3x-3.x: no code or data
            "Memory: 36132k/36132k available, 4828k reserved, 0K highmem",
            {"total_kb": 36132, "reserved_kb": 4828, "highmem_kb": 0, "kernel_code_kb": None, "format": "arm-reserved"},
        ),
        (  # sparc64: an address range after it
            "Memory: 1023104k available (2416k kernel code, 744k data, 160k init) [fffff80000000000,000000003fe8e000]",
            {"available_kb": 1023104, "kernel_code_data_kb": 2416 + 744},
        ),
        (  # s390: usable
            "Memory: 2055736k/2097152k usable (4290k kernel code, 0k reserved, 1468k data, 212k init)",
            {"available_kb": 2055736, "reserved_kb": 0},
        ),
        (  # m68knommu: "Memory available:", RAM and ROM
            "Memory available: 7032k/8192k RAM, 0k/0k ROM (1164k kernel code, 222k data)",
            {"available_kb": 7032, "total_kb": 8192, "kernel_code_kb": 1164, "data_kb": 222},
        ),
        (  # 4.x with highmem at the end, printk time
            "[    0.000000] Memory: 484508K/524288K available (6144K kernel code, 387K rwdata, 1972K rodata, "
            "1024K init, 8008K bss, 23396K reserved, 16384K cma-reserved, 0K highmem)",
            {
                "rwdata_kb": 387,
                "rodata_kb": 1972,
                "data_kb": 387 + 1972,
                "cma_reserved_kb": 16384,
                "highmem_kb": 0,
                "kernel_code_data_kb": 6144 + 387 + 1972,
                "format": "rwdata-rodata",
                "wording": "modern",
            },
        ),
    ],
)
def test_memory_line_of_every_era(line, want):
    m = meminfo.parse_memory(line)
    assert {k: m.get(k) for k in want} == want


def test_arm_total_line_and_virtual_layout():
    text = (
        "Memory: 40MB = 40MB total\n"
        "Memory: 36132k/36132k available, 4828k reserved, 0K highmem\n"
        "Virtual kernel memory layout:\n"
        "      .init : 0xc0008000 - 0xc0020000   (  96 kB)\n"
        "      .text : 0xc0020000 - 0xc0406000   (3992 kB)\n"
    )
    m = meminfo.parse_memory(text)
    assert m["mb_total_kb"] == 40960 and m["total_line_no"] == 1 and m["line_no"] == 2
    assert m["total_kb"] == 36132, "the available line's own total comes first"
    assert m["sections_kb"] == {"init": 96, "text": 3992}
    m = meminfo.parse_memory(
        "Memory: 32MB 32MB = 64MB total\nMemory: 63228KB available (1198K code, 290K data, 76K init)"
    )
    assert m["total_kb"] == 65536 and m["available_kb"] == 63228


@pytest.mark.parametrize(
    "lines",
    [
        ["Memory: 126304k/131072k available (1684k kernel code, 4768k reserved, 216k data,", " 276k init, 0k highmem)"],
        [
            "Memory: 126304k/131072k available (1684k kernel code,",
            "4768k reserved,",
            "216k data, 276k init, 0k highmem)",
        ],
        ["Memory: 126304k/131072k", "available (1684k kernel code, 4768k reserved, 216k data, 276k init, 0k highmem)"],
    ],
)
def test_wrapped_memory_line_is_joined(lines):
    m = meminfo.parse_memory("\n".join(["Calibrating delay loop... 395.67 BogoMIPS", *lines, "Dentry cache hash"]))
    assert (m["available_kb"], m["reserved_kb"], m["init_kb"], m["highmem_kb"]) == (126304, 4768, 276, 0)
    assert m["lines"] == list(range(2, 2 + len(lines)))


def test_a_memory_line_a_terminal_cut_inside_a_number_is_joined_without_a_space():
    """A terminal wraps at its 80th column, inside "72k" (a WRT160N's 2.4.20 console, read by
    hand: 72k init); a mailer's wrap at a space still joins with one."""
    m = meminfo.parse_memory(
        "Memory: 14320k/16384k available (1464k kernel code, 2064k reserved, 108k data, 7\n"
        "2k init, 0k highmem)\nDentry cache hash table entries: 2048"
    )
    assert (m["init_kb"], m["data_kb"], m["highmem_kb"], m["lines"]) == (72, 108, 0, [1, 2])
    m = meminfo.parse_memory(
        "Memory: 14320k/16384k available (1464k kernel code, 2064k reserved, 108\nk data, 72k init)"
    )
    assert (m["data_kb"], m["init_kb"]) == (108, 72)
    m = meminfo.parse_memory(
        "Memory: 14320k/16384k available (1464k kernel code, 2064k reserved, 108k data,\n72k init)"
    )
    assert (m["data_kb"], m["init_kb"]) == (108, 72)


def test_a_part_name_a_screen_cut_with_a_dollar_is_the_one_it_begins():
    """A screen marks a line it cut with "$" over its last character: "1432K i$" then "it, ..."
    (barebox 2019.01 on an AR9330, read by hand: 1432K init, as its Freeing line says)."""
    m = meminfo.parse_memory(
        "Memory: 56624K/65536K available (4883K kernel code, 398K rwdata, 960K rodata, 1432K i$\n"
        "it, 213K bss, 8912K reserved, 0K cma-reserved)"
    )
    assert (m["init_kb"], m["bss_kb"], m["kernel_code_kb"], m["reserved_kb"]) == (1432, 213, 4883, 8912)
    m = meminfo.parse_memory("Memory: 56624K/65536K available (4883K kernel code, 398K r$\nta, 960K rodata)")
    assert m.get("rwdata_kb") is None and m["rodata_kb"] == 960  # "r": rwdata, rodata or reserved


def test_a_part_name_cut_at_the_end_of_a_screen_line_is_the_one_it_begins():
    """minicom's saved screen cuts a line at column 80 and leaves the line's last character
    there: "2512k reserv)" (an SH4 LANDISK, read by hand: 2512k reserved); an unknown last
    name that begins no known one, or several, fills nothing."""
    m = meminfo.parse_memory("Memory: 62976k/63024k available (1423k kernel code, 2512k reserv)")
    assert (m["available_kb"], m["kernel_code_kb"], m["reserved_kb"], m["data_kb"]) == (62976, 1423, 2512, None)
    m = meminfo.parse_memory("Memory: 62976k/63024k available (1423k kernel code, 2512k foo)")
    assert m["reserved_kb"] is None and m["parts_kb"]["foo"] == 2512
    m = meminfo.parse_memory("Memory: 62976k/63024k available (1423k kernel code, 2512k r)")
    assert (m["reserved_kb"], m.get("rwdata_kb"), m.get("rodata_kb")) == (None, None, None)


def test_a_truncated_memory_line_joins_no_kernel_line():
    m = meminfo.parse_memory(
        "Memory: 126304k/131072k available (1684k kernel code, 4768k reserved, 216k data,\n"
        "Dentry cache hash table entries: 16384 (order: 5, 131072 bytes)\n"
    )
    assert m["lines"] == [1] and m["data_kb"] == 216 and m["init_kb"] is None


@pytest.mark.parametrize(
    "line,want",
    [
        ("Freeing unused kernel memory: 1024K (c0a00000 - c0b00000)", ("unused kernel", "init", 1024)),
        ("Freeing init memory: 76K", ("init", "init", 76)),
        ("Freeing unused kernel memory: 168k freed", ("unused kernel", "init", 168)),
        ("Freeing unused kernel memory: 60k init", ("unused kernel", "init", 60)),
        (
            "[    5.5] Freeing unused kernel image (initmem) memory: 1024K",
            ("unused kernel image (initmem)", "init", 1024),
        ),
        ("Freeing initrd memory: 3696k freed", ("initrd", "initrd", 3696)),
        ("Freeing SMP alternatives: 24k freed", ("SMP alternatives", "other", 24)),
        (
            "Freeing unused kernel image (text/rodata gap) memory: 2040K",
            ("unused kernel image (text/rodata gap)", "other", 2040),
        ),
    ],
)
def test_freeing_lines(line, want):
    f = meminfo.freeing_line(line)
    assert (f["what"], f["kind"], f["kb"]) == want


def test_footprint_record_keeps_its_fields():
    """footprint.json's memory_line (docs/records.md) has the same fields as before;
    a line's total is its own ("NNk/NNk available"), not ARM's separate total line."""
    m = meminfo.parse_memory_line(
        "Memory: 64MB = 64MB total\nMemory: 63228KB available (1198K code, 290K data, 76K init)"
    )
    assert set(m) == set(meminfo.RECORD_KEYS) | {"text"}
    assert m["line"] == 2 and m["text"].startswith("Memory: 63228KB available")  # line number and text in the log
    assert m["total_kb"] is None and m["kernel_code_data_kb"] == 1198 + 290
    m = meminfo.parse_memory_line(
        "Memory: 40MB = 40MB total\nMemory: 36132k/36132k available, 4828k reserved, 0K highmem"
    )
    assert m["total_kb"] == 36132 and m["kernel_code_data_kb"] is None
    assert meminfo.parse_memory_line("Memory: 64MB = 64MB total") is None
