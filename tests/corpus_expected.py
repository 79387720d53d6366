"""Expected parse of every line of tests/data/corpus/*.csv.

These values were written BY HAND from the specification
(docs/bonnie-csv-format.md and the "A run as JSON" section of
docs/api-contract.md), reading each line field by field.  They were NOT
produced by running or reading bonnieboard's parser, so they can be used to
check it.

EXPECTED is keyed by (file_name, line_no), line_no being the 1-based physical
line number inside tests/data/corpus/<file_name>.  Each value is a dict in the
contract's run-JSON shape; "results" maps each of the twelve tests, in
bonnie++'s order, to a tuple (status, value, cpu_pct, latency_us):

* status: "ok", "too_fast" (+++++/+++) or "not_run" (empty cells);
* value / cpu_pct: None unless "ok"; value is an int for rates, a float for seeks;
* latency_us: int microseconds (us as is, ms*1000, s*1000000) or None when the
  latency cell is empty (always None for 1.03-family lines); it does not depend
  on status.

Notes on the less obvious lines:
* public-sample.csv:11 (fslab3) is a 47-field 1.96 "-s 0" line (spec 3.3-3):
  every column from num_files on is one to the left of the 48-field layout.
* 1.9x num_dirs comes from the 5th file-test field (the one the header calls
  file_chunk_size); the 4th is always empty (spec 3.3-1).
* 1.98 lines never record the I/O chunk size (io_chunk_bytes None); seek_count and
  seek_procs come from fields 7 and 8 and are empty with -s 0.
* seed-lines.csv:2 is CSV format 1.93c written by bonnie++ 1.94, with an I/O
  chunk of "1m" (1048576 bytes).
"""

TESTS = (
    "putc", "put_block", "rewrite", "getc", "get_block", "seeks",
    "seq_create", "seq_stat", "seq_del", "ran_create", "ran_stat", "ran_del",
)

OK, TF, NR = "ok", "too_fast", "not_run"


def _ft(num_files, max_size=None, min_size=None, num_dirs=None, link=None):
    return {"num_files": num_files, "max_size": max_size, "min_size": min_size,
            "num_dirs": num_dirs, "link": link}


def _run(machine, format_version, bonnie_version, concurrency, seed,
         file_size_mib, io_chunk_bytes, seek_count, seek_procs, file_test, rows):
    names = tuple(r[0] for r in rows)
    assert names == TESTS, names
    return {
        "machine": machine,
        "format_version": format_version,
        "bonnie_version": bonnie_version,
        "concurrency": concurrency,
        "seed": seed,
        "file_size_mib": file_size_mib,
        "io_chunk_bytes": io_chunk_bytes,
        "seek_count": seek_count,
        "seek_procs": seek_procs,
        "file_test": file_test,
        "results": {r[0]: tuple(r[1:]) for r in rows},
    }


def _v103(machine, file_size_mib, file_test, rows):
    """A 1.03-family line: no version, concurrency, seed or latencies."""
    return _run(machine, "1.03", None, None, None, file_size_mib, None, None, None,
                file_test, [(t, s, v, c, None) for (t, s, v, c) in rows])


EXPECTED = {}
B200 = "bonnie200-sample.csv"
PUB = "public-sample.csv"
SEED = "seed-lines.csv"

# ---------------------------------------------------------------- bonnie200-sample.csv
# 1: -s 512M (default tests)
EXPECTED[(B200, 1)] = _run("vm", "1.98", "2.00a", 1, "1795352513", 512, None, 8192, 5, _ft(16), [
    ("putc",       OK, 869, 96,        18213),
    ("put_block",  OK, 420469, 81,     4307),
    ("rewrite",    TF, None, None,     1098),
    ("getc",       OK, 1443, 98,       10287),
    ("get_block",  TF, None, None,     117),
    ("seeks",      TF, None, None,     7618),
    ("seq_create", OK, 16795, 94,      10730),
    ("seq_stat",   TF, None, None,     5072),
    ("seq_del",    TF, None, None,     2346),
    ("ran_create", OK, 23036, 95,      12162),
    ("ran_stat",   TF, None, None,     214),
    ("ran_del",    TF, None, None,     6909),
])
# 2: -s 512M -f
EXPECTED[(B200, 2)] = _run("vm", "1.98", "2.00a", 1, "1795352069", 512, None, 8192, 5, _ft(16), [
    ("putc",       NR, None, None,     None),
    ("put_block",  OK, 564124, 74,     5996),
    ("rewrite",    OK, 955896, 61,     9384),
    ("getc",       NR, None, None,     None),
    ("get_block",  TF, None, None,     1514),
    ("seeks",      TF, None, None,     5243),
    ("seq_create", OK, 3411, 97,       8781),
    ("seq_stat",   TF, None, None,     703),
    ("seq_del",    TF, None, None,     7380),
    ("ran_create", OK, 2189, 99,       10912),
    ("ran_stat",   TF, None, None,     144),
    ("ran_del",    TF, None, None,     5710),
])
# 3: -s 512M -n 0
EXPECTED[(B200, 3)] = _run("vm", "1.98", "2.00a", 1, "1795352318", 512, None, 8192, 5, None, [
    ("putc",       OK, 896, 99,        14634),
    ("put_block",  OK, 789635, 74,     1185),
    ("rewrite",    TF, None, None,     3473),
    ("getc",       OK, 1454, 98,       10061),
    ("get_block",  TF, None, None,     157),
    ("seeks",      TF, None, None,     8052),
    ("seq_create", NR, None, None,     None),
    ("seq_stat",   NR, None, None,     None),
    ("seq_del",    NR, None, None,     None),
    ("ran_create", NR, None, None,     None),
    ("ran_stat",   NR, None, None,     None),
    ("ran_del",    NR, None, None,     None),
])
# 4: -s 512M -n 16:4096:1024:4  -> 16,4096,1024,,4
EXPECTED[(B200, 4)] = _run("vm", "1.98", "2.00a", 1, "1795350853", 512, None, 8192, 5,
                           _ft(16, max_size=4096, min_size=1024, num_dirs=4), [
    ("putc",       OK, 910, 99,        10897),
    ("put_block",  OK, 691799, 65,     3388),
    ("rewrite",    OK, 1045654, 70,    5547),
    ("getc",       OK, 1390, 94,       21736),
    ("get_block",  TF, None, None,     1210),
    ("seeks",      TF, None, None,     8454),
    ("seq_create", OK, 3213, 94,       5764),
    ("seq_stat",   TF, None, None,     632),
    ("seq_del",    OK, 5611, 27,       8451),
    ("ran_create", OK, 3138, 95,       6788),
    ("ran_stat",   TF, None, None,     262),
    ("ran_del",    OK, 4484, 25,       10344),
])
# 5: -s 0 -n 4  (fields 5-20 empty, seeks/procs empty too)
EXPECTED[(B200, 5)] = _run("vm", "1.98", "2.00a", 1, "1795358315", None, None, None, None, _ft(4), [
    ("putc",       NR, None, None,     None),
    ("put_block",  NR, None, None,     None),
    ("rewrite",    NR, None, None,     None),
    ("getc",       NR, None, None,     None),
    ("get_block",  NR, None, None,     None),
    ("seeks",      NR, None, None,     None),
    ("seq_create", OK, 1090, 98,       8127),
    ("seq_stat",   TF, None, None,     1405),
    ("seq_del",    TF, None, None,     3849),
    ("ran_create", OK, 1122, 98,       5611),
    ("ran_stat",   TF, None, None,     58),
    ("ran_del",    TF, None, None,     787),
])
# 6: -s 0 -n 4:-1 (hard links) -> 4,link,,,
EXPECTED[(B200, 6)] = _run("vm", "1.98", "2.00a", 1, "1795357120", None, None, None, None,
                           _ft(4, link="link"), [
    ("putc",       NR, None, None,     None),
    ("put_block",  NR, None, None,     None),
    ("rewrite",    NR, None, None,     None),
    ("getc",       NR, None, None,     None),
    ("get_block",  NR, None, None,     None),
    ("seeks",      NR, None, None,     None),
    ("seq_create", TF, None, None,     1092),
    ("seq_stat",   TF, None, None,     473),
    ("seq_del",    TF, None, None,     528),
    ("ran_create", TF, None, None,     1452),
    ("ran_stat",   TF, None, None,     171),
    ("ran_del",    TF, None, None,     152),
])
# 7: -s 256M -f -n 1 -m "my host.example.org"
EXPECTED[(B200, 7)] = _run("my host.example.org", "1.98", "2.00a", 1, "1795357100", 256, None, 8192, 5,
                           _ft(1), [
    ("putc",       NR, None, None,     None),
    ("put_block",  TF, None, None,     2499),
    ("rewrite",    TF, None, None,     231),
    ("getc",       NR, None, None,     None),
    ("get_block",  TF, None, None,     2328),
    ("seeks",      TF, None, None,     9179),
    ("seq_create", OK, 823, 97,        5319),
    ("seq_stat",   TF, None, None,     1056),
    ("seq_del",    TF, None, None,     998),
    ("ran_create", OK, 816, 97,        17985),
    ("ran_stat",   TF, None, None,     207),
    ("ran_del",    TF, None, None,     261),
])
# 8: -s 1g -f -n 1
EXPECTED[(B200, 8)] = _run("vm", "1.98", "2.00a", 1, "1795357647", 1024, None, 8192, 5, _ft(1), [
    ("putc",       NR, None, None,     None),
    ("put_block",  OK, 342564, 84,     10178),
    ("rewrite",    OK, 938152, 72,     3453),
    ("getc",       NR, None, None,     None),
    ("get_block",  TF, None, None,     11486),
    ("seeks",      TF, None, None,     8069),
    ("seq_create", OK, 748, 98,        8136),
    ("seq_stat",   TF, None, None,     130),
    ("seq_del",    TF, None, None,     512),
    ("ran_create", OK, 825, 97,        18458),
    ("ran_stat",   TF, None, None,     5),
    ("ran_del",    TF, None, None,     126),
])

# ---------------------------------------------------------------- public-sample.csv
# 1..12: format 1.96 (48 fields, except line 11 with 47)
EXPECTED[(PUB, 1)] = _run("host1", "1.96", "1.96", 1, "1329851830", 8096, None, None, None, _ft(256), [
    ("putc",       OK, 838, 98,        9829),
    ("put_block",  OK, 110033, 7,      226_000),
    ("rewrite",    OK, 48154, 4,       1_759_000),
    ("getc",       OK, 3609, 79,       112_000),
    ("get_block",  OK, 134153, 4,      160_000),
    ("seeks",      OK, 228.2, 1,       2_016_000),
    ("seq_create", OK, 30301, 79,      300_000),
    ("seq_stat",   TF, None, None,     458),
    ("seq_del",    OK, 2525, 2,        6_094_000),
    ("ran_create", OK, 31290, 79,      309_000),
    ("ran_stat",   TF, None, None,     17),
    ("ran_del",    OK, 1558, 1,        6_206_000),
])
EXPECTED[(PUB, 2)] = _run("host2", "1.96", "1.96", 1, "1329851305", 8096, None, None, None, _ft(256), [
    ("putc",       OK, 846, 97,        16549),
    ("put_block",  OK, 109696, 7,      264_000),
    ("rewrite",    OK, 46532, 3,       1_713_000),
    ("getc",       OK, 3516, 77,       173_000),
    ("get_block",  OK, 131159, 4,      335_000),
    ("seeks",      OK, 237.8, 1,       2_025_000),
    ("seq_create", OK, 29369, 76,      316_000),
    ("seq_stat",   TF, None, None,     323),
    ("seq_del",    OK, 2434, 2,        6_103_000),
    ("ran_create", OK, 30553, 79,      298_000),
    ("ran_stat",   TF, None, None,     1271),
    ("ran_del",    OK, 1514, 1,        7_009_000),
])
EXPECTED[(PUB, 3)] = _run("host3", "1.96", "1.96", 1, "1329840761", 16384, None, None, None, _ft(256), [
    ("putc",       OK, 1028, 0,        16101),
    ("put_block",  OK, 94051, 0,       7_694_000),
    ("rewrite",    OK, 40554, 0,       7_790_000),
    ("getc",       OK, 1668, 0,        13804),
    ("get_block",  OK, 121874, 0,      124_000),
    ("seeks",      OK, 380.3, 0,       76495),
    ("seq_create", OK, 50115, 0,       312_000),
    ("seq_stat",   OK, 332943, 0,      1088),
    ("seq_del",    OK, 2338, 0,        10_380_000),
    ("ran_create", OK, 51591, 0,       420_000),
    ("ran_stat",   TF, None, None,     15),
    ("ran_del",    OK, 1189, 0,        15_792_000),
])
EXPECTED[(PUB, 4)] = _run("host5", "1.96", "1.96", 1, "1329668279", 8096, None, None, None, _ft(256), [
    ("putc",       OK, 1098, 98,       11373),
    ("put_block",  OK, 75834, 6,       8_134_000),
    ("rewrite",    OK, 41582, 5,       1_044_000),
    ("getc",       OK, 6098, 97,       11697),
    ("get_block",  OK, 112804, 7,      1_466_000),
    ("seeks",      OK, 1986.0, 26,     400_000),
    ("seq_create", OK, 55300, 62,      351_000),
    ("seq_stat",   TF, None, None,     439),
    ("seq_del",    OK, 15620, 13,      775_000),
    ("ran_create", OK, 57603, 65,      306_000),
    ("ran_stat",   TF, None, None,     50),
    ("ran_del",    OK, 10506, 9,       780_000),
])
EXPECTED[(PUB, 5)] = _run("phil-desktop", "1.96", "1.96", 1, "1273080348", 12288, None, None, None, _ft(16), [
    ("putc",       OK, 429, 95,        43308),
    ("put_block",  OK, 65995, 12,      7_867_000),
    ("rewrite",    OK, 37384, 7,       5_064_000),
    ("getc",       OK, 2131, 89,       31844),
    ("get_block",  OK, 93821, 7,       610_000),
    ("seeks",      OK, 262.3, 9,       290_000),
    ("seq_create", OK, 8329, 20,       4499),
    ("seq_stat",   TF, None, None,     918),
    ("seq_del",    OK, 17328, 31,      745),
    ("ran_create", OK, 12456, 30,      614),
    ("ran_stat",   TF, None, None,     973),
    ("ran_del",    OK, 16061, 29,      5851),
])
EXPECTED[(PUB, 6)] = _run("beta", "1.96", "1.96", 1, "1273183999", 1024, None, None, None, _ft(16), [
    ("putc",       OK, 269, 95,        65673),
    ("put_block",  OK, 43321, 11,      780_000),
    ("rewrite",    OK, 16657, 5,       1_430_000),
    ("getc",       OK, 1210, 88,       74939),
    ("get_block",  OK, 45068, 5,       121_000),
    ("seeks",      OK, 119.3, 4,       1_332_000),
    ("seq_create", OK, 15984, 35,      11107),
    ("seq_stat",   TF, None, None,     1053),
    ("seq_del",    OK, 28284, 44,      2141),
    ("ran_create", OK, 22668, 50,      7238),
    ("ran_stat",   TF, None, None,     15082),
    ("ran_del",    OK, 24291, 42,      16085),
])
EXPECTED[(PUB, 7)] = _run("pb2", "1.96", "1.96", 1, "1273295329", 8192, None, None, None, _ft(16), [
    ("putc",       OK, 311, 99,        26130),
    ("put_block",  OK, 101134, 18,     1_442_000),
    ("rewrite",    OK, 46417, 14,      1_241_000),
    ("getc",       OK, 3763, 82,       77106),
    ("get_block",  OK, 122681, 8,      135_000),
    ("seeks",      OK, 209.5, 2,       661_000),
    ("seq_create", OK, 19760, 27,      5372),
    ("seq_stat",   TF, None, None,     1219),
    ("seq_del",    OK, 23638, 18,      748),
    ("ran_create", OK, 21742, 27,      1271),
    ("ran_stat",   TF, None, None,     260),
    ("ran_del",    OK, 24594, 21,      148),
])
EXPECTED[(PUB, 8)] = _run("ryan-desktop", "1.96", "1.96", 1, "1273316020", 7168, None, None, None, _ft(16), [
    ("putc",       OK, 81, 96,         106_000),
    ("put_block",  OK, 37067, 14,      2_123_000),
    ("rewrite",    OK, 18511, 7,       2_144_000),
    ("getc",       OK, 997, 97,        33867),
    ("get_block",  OK, 47953, 4,       147_000),
    ("seeks",      OK, 156.3, 4,       1_338_000),
    ("seq_create", OK, 14759, 48,      954),
    ("seq_stat",   TF, None, None,     1163),
    ("seq_del",    OK, 25042, 59,      1136),
    ("ran_create", OK, 19757, 64,      946),
    ("ran_stat",   TF, None, None,     921),
    ("ran_del",    OK, 22463, 55,      941),
])
EXPECTED[(PUB, 9)] = _run("devback1", "1.96", "1.96", 1, "1373282064", 24576, None, None, None, _ft(16), [
    ("putc",       OK, 521, 99,        16070),
    ("put_block",  OK, 192435, 27,     454_000),
    ("rewrite",    OK, 106363, 15,     174_000),
    ("getc",       OK, 2691, 98,       14736),
    ("get_block",  OK, 446441, 27,     98188),
    ("seeks",      OK, 1067.0, 43,     30739),
    ("seq_create", OK, 23295, 46,      5985),
    ("seq_stat",   TF, None, None,     563),
    ("seq_del",    TF, None, None,     583),
    ("ran_create", TF, None, None,     960),
    ("ran_stat",   TF, None, None,     32),
    ("ran_del",    TF, None, None,     259),
])
EXPECTED[(PUB, 10)] = _run("corei7", "1.96", "1.96", 1, "1323305088", 32080, None, None, None, _ft(16), [
    ("putc",       OK, 1148, 98,       15865),
    ("put_block",  OK, 126598, 11,     554_000),
    ("rewrite",    OK, 74273, 9,       483_000),
    ("getc",       OK, 5334, 100,      4473),
    ("get_block",  OK, 229733, 15,     434_000),
    ("seeks",      OK, 13116.0, 160,   2480),
    ("seq_create", OK, 23322, 22,      1343),
    ("seq_stat",   TF, None, None,     924),
    ("seq_del",    OK, 24000, 16,      603),
    ("ran_create", TF, None, None,     633),
    ("ran_stat",   TF, None, None,     102),
    ("ran_del",    TF, None, None,     625),
])
# 11: the 47-field 1.96 "-s 0" line (spec 3.3-3): num_files at index 18, not 19.
#     60,32,32,,  -> num_files 60, max 32, min 32, (always-empty), num_dirs empty
EXPECTED[(PUB, 11)] = _run("fslab3", "1.96", "1.96", 1, "1374655110", None, None, None, None,
                           _ft(60, max_size=32, min_size=32), [
    ("putc",       NR, None, None,     None),
    ("put_block",  NR, None, None,     None),
    ("rewrite",    NR, None, None,     None),
    ("getc",       NR, None, None,     None),
    ("get_block",  NR, None, None,     None),
    ("seeks",      NR, None, None,     None),
    ("seq_create", OK, 1702, 14,       3_874_000),
    ("seq_stat",   OK, 2025, 12,       6_645_000),
    ("seq_del",    OK, 1332, 4,        8_659_000),
    ("ran_create", OK, 1873, 16,       505_000),
    ("ran_stat",   OK, 2047, 13,       7_257_000),
    ("ran_del",    OK, 1266, 3,        9_627_000),
])
EXPECTED[(PUB, 12)] = _run("servername01", "1.96", "1.96", 1, "1450900351", 163840, None, None, None, _ft(50), [
    ("putc",       NR, None, None,     None),
    ("put_block",  OK, 39912, 3,       12_226_000),
    ("rewrite",    OK, 29398, 4,       61_883_000),
    ("getc",       NR, None, None,     None),
    ("get_block",  OK, 79075, 4,       349_000),
    ("seeks",      OK, 207.2, 34,      3_643_000),
    ("seq_create", OK, 170, 2,         234_000),
    ("seq_stat",   OK, 42859, 17,      22897),
    ("seq_del",    OK, 288, 1,         145_000),
    ("ran_create", OK, 225, 3,         296_000),
    ("ran_stat",   OK, 3525, 9,        897),
    ("ran_del",    OK, 345, 1,         84789),
])

# 13..23: the 1.03 family (27 fields, no latencies)
EXPECTED[(PUB, 13)] = _v103("host7", 8096, _ft(256), [
    ("putc",       OK, 38449, 67),
    ("put_block",  OK, 36403, 9),
    ("rewrite",    OK, 19240, 5),
    ("getc",       OK, 47427, 74),
    ("get_block",  OK, 47958, 7),
    ("seeks",      OK, 330.6, 0),
    ("seq_create", OK, 216, 99),
    ("seq_stat",   TF, None, None),
    ("seq_del",    OK, 66339, 55),
    ("ran_create", OK, 222, 99),
    ("ran_stat",   TF, None, None),
    ("ran_del",    OK, 304, 35),
])
EXPECTED[(PUB, 14)] = _v103("directive4", 6144, _ft(16), [
    ("putc",       OK, 44179, 80),
    ("put_block",  OK, 49453, 17),
    ("rewrite",    OK, 17477, 6),
    ("getc",       OK, 38956, 76),
    ("get_block",  OK, 46240, 8),
    ("seeks",      OK, 158.5, 1),
    ("seq_create", OK, 32493, 87),
    ("seq_stat",   TF, None, None),
    ("seq_del",    TF, None, None),
    ("ran_create", TF, None, None),
    ("ran_stat",   TF, None, None),
    ("ran_del",    TF, None, None),
])
EXPECTED[(PUB, 15)] = _v103("stu", 8192, _ft(16), [
    ("putc",       OK, 84612, 96),
    ("put_block",  OK, 170477, 43),
    ("rewrite",    OK, 73433, 36),
    ("getc",       OK, 76501, 88),
    ("get_block",  OK, 204814, 39),
    ("seeks",      OK, 424.9, 1),
    ("seq_create", TF, None, None),
    ("seq_stat",   TF, None, None),
    ("seq_del",    TF, None, None),
    ("ran_create", TF, None, None),
    ("ran_stat",   TF, None, None),
    ("ran_del",    TF, None, None),
])
# 16: empty machine name
EXPECTED[(PUB, 16)] = _v103("", 2048, _ft(16), [
    ("putc",       OK, 10874, 85),
    ("put_block",  OK, 52615, 35),
    ("rewrite",    OK, 18392, 12),
    ("getc",       OK, 12760, 90),
    ("get_block",  OK, 48394, 9),
    ("seeks",      OK, 103.9, 0),
    ("seq_create", OK, 13055, 93),
    ("seq_stat",   TF, None, None),
    ("seq_del",    OK, 15189, 87),
    ("ran_create", OK, 12872, 95),
    ("ran_stat",   TF, None, None),
    ("ran_del",    OK, 20590, 99),
])
EXPECTED[(PUB, 17)] = _v103("mindpipe", 1024, _ft(16), [
    ("putc",       OK, 3002, 88),
    ("put_block",  OK, 31164, 60),
    ("rewrite",    OK, 13485, 29),
    ("getc",       OK, 3035, 84),
    ("get_block",  OK, 32838, 36),
    ("seeks",      OK, 56.7, 0),
    ("seq_create", OK, 94, 40),
    ("seq_stat",   TF, None, None),
    ("seq_del",    OK, 15510, 66),
    ("ran_create", OK, 204, 86),
    ("ran_stat",   TF, None, None),
    ("ran_del",    OK, 906, 83),
])
EXPECTED[(PUB, 18)] = _v103("standard", 32768, _ft(16), [
    ("putc",       NR, None, None),
    ("put_block",  OK, 162171, 12),
    ("rewrite",    OK, 74414, 6),
    ("getc",       NR, None, None),
    ("get_block",  OK, 229003, 8),
    ("seeks",      OK, 361.2, 1),
    ("seq_create", OK, 81, 0),
    ("seq_stat",   TF, None, None),
    ("seq_del",    OK, 117, 0),
    ("ran_create", OK, 80, 0),
    ("ran_stat",   TF, None, None),
    ("ran_del",    OK, 115, 0),
])
EXPECTED[(PUB, 19)] = _v103("ubuntu", 8192, _ft(16), [
    ("putc",       NR, None, None),
    ("put_block",  OK, 65284, 18),
    ("rewrite",    OK, 39589, 8),
    ("getc",       NR, None, None),
    ("get_block",  OK, 96293, 8),
    ("seeks",      OK, 7510.9, 6),
    ("seq_create", TF, None, None),
    ("seq_stat",   TF, None, None),
    ("seq_del",    TF, None, None),
    ("ran_create", TF, None, None),
    ("ran_stat",   TF, None, None),
    ("ran_del",    TF, None, None),
])
EXPECTED[(PUB, 20)] = _v103("raid0", 2048, _ft(16), [
    ("putc",       OK, 83720, 95),
    ("put_block",  OK, 813061, 95),
    ("rewrite",    OK, 1185231, 100),
    ("getc",       OK, 84567, 97),
    ("get_block",  OK, 2828489, 97),
    ("seeks",      OK, 1187.5, 0),
    ("seq_create", TF, None, None),
    ("seq_stat",   TF, None, None),
    ("seq_del",    TF, None, None),
    ("ran_create", TF, None, None),
    ("ran_stat",   TF, None, None),
    ("ran_del",    TF, None, None),
])
EXPECTED[(PUB, 21)] = _v103("raid0", 2048, _ft(16), [
    ("putc",       OK, 87919, 99),
    ("put_block",  OK, 55024, 6),
    ("rewrite",    OK, 56396, 5),
    ("getc",       OK, 88632, 99),
    ("get_block",  OK, 2981975, 99),
    ("seeks",      TF, None, None),
    ("seq_create", OK, 319, 0),
    ("seq_stat",   TF, None, None),
    ("seq_del",    OK, 266, 0),
    ("ran_create", OK, 307, 0),
    ("ran_stat",   TF, None, None),
    ("ran_del",    OK, 269, 0),
])
EXPECTED[(PUB, 22)] = _v103("tidbit.kungfoocoder.org", 1024, _ft(16), [
    ("putc",       NR, None, None),
    ("put_block",  OK, 55236, 11),
    ("rewrite",    OK, 36165, 10),
    ("getc",       NR, None, None),
    ("get_block",  OK, 73514, 8),
    ("seeks",      OK, 2138.3, 2),
    ("seq_create", TF, None, None),
    ("seq_stat",   TF, None, None),
    ("seq_del",    OK, 25015, 99),
    ("ran_create", OK, 28712, 100),
    ("ran_stat",   TF, None, None),
    ("ran_del",    OK, 26846, 100),
])
EXPECTED[(PUB, 23)] = _v103("tidbit.kungfoocoder.org", 1024, _ft(16), [
    ("putc",       NR, None, None),
    ("put_block",  OK, 55236, 11),
    ("rewrite",    OK, 30073, 8),
    ("getc",       NR, None, None),
    ("get_block",  OK, 84287, 10),
    ("seeks",      OK, 2046.9, 2),
    ("seq_create", TF, None, None),
    ("seq_stat",   TF, None, None),
    ("seq_del",    OK, 24862, 99),
    ("ran_create", OK, 28340, 99),
    ("ran_stat",   TF, None, None),
    ("ran_del",    OK, 26490, 99),
])

# 24..28: format 1.97
EXPECTED[(PUB, 24)] = _run("Jacob", "1.97", "1.97", 1, "1557290182", 2048, None, None, None, _ft(16), [
    ("putc",       OK, 1380, 99,       7842),
    ("put_block",  OK, 761540, 63,     55943),
    ("rewrite",    OK, 444916, 31,     23162),
    ("getc",       TF, None, None,     3599),
    ("get_block",  OK, 1433008, 42,    7704),
    ("seeks",      TF, None, None,     12339),
    ("seq_create", TF, None, None,     848),
    ("seq_stat",   TF, None, None,     507),
    ("seq_del",    TF, None, None,     782),
    ("ran_create", TF, None, None,     651),
    ("ran_stat",   TF, None, None,     66),
    ("ran_del",    TF, None, None,     802),
])
EXPECTED[(PUB, 25)] = _run("wifo3-02", "1.97", "1.97", 1, "1438369124", 64512, None, None, None, _ft(16), [
    ("putc",       OK, 1842, 89,       8735),
    ("put_block",  OK, 347029, 24,     16764),
    ("rewrite",    OK, 175829, 17,     79061),
    ("getc",       OK, 3404, 89,       18280),
    ("get_block",  OK, 495890, 20,     32499),
    ("seeks",      OK, 447.9, 11,      228_000),
    ("seq_create", OK, 7555, 17,       349_000),
    ("seq_stat",   TF, None, None,     127),
    ("seq_del",    OK, 18185, 27,      12376),
    ("ran_create", OK, 7097, 12,       382_000),
    ("ran_stat",   TF, None, None,     14),
    ("ran_del",    OK, 11216, 21,      490_000),
])
EXPECTED[(PUB, 26)] = _run("wifo3-02", "1.97", "1.97", 1, "1438076799", 64512, None, None, None, _ft(16), [
    ("putc",       OK, 1905, 91,       8631),
    ("put_block",  OK, 364656, 24,     18055),
    ("rewrite",    OK, 119264, 12,     184_000),
    ("getc",       OK, 3457, 86,       23985),
    ("get_block",  OK, 306391, 14,     57565),
    ("seeks",      OK, 439.5, 17,      83422),
    ("seq_create", OK, 8891, 13,       391),
    ("seq_stat",   TF, None, None,     125),
    ("seq_del",    OK, 17536, 23,      128),
    ("ran_create", OK, 11535, 17,      375),
    ("ran_stat",   TF, None, None,     20),
    ("ran_del",    OK, 19876, 28,      90),
])
EXPECTED[(PUB, 27)] = _run("nfs-worker1", "1.97", "1.97", 1, "1545782353", 2048, None, None, None, _ft(16), [
    ("putc",       OK, 1113, 97,       21103),
    ("put_block",  OK, 78993, 7,       801_000),
    ("rewrite",    OK, 75546, 11,      1_565_000),
    ("getc",       OK, 2102, 92,       19930),
    ("get_block",  OK, 271440, 13,     21978),
    ("seeks",      OK, 6863.0, 53,     9956),
    ("seq_create", OK, 407, 7,         65891),
    ("seq_stat",   TF, None, None,     18799),
    ("seq_del",    OK, 1328, 12,       81134),
    ("ran_create", OK, 526, 6,         31558),
    ("ran_stat",   TF, None, None,     3596),
    ("ran_del",    OK, 1704, 13,       10771),
])
EXPECTED[(PUB, 28)] = _run("cc3550", "1.97", "1.97", 1, "1517338312", 8192, None, None, None, _ft(16), [
    ("putc",       OK, 864, 99,        14345),
    ("put_block",  OK, 77866, 7,       2_216_000),
    ("rewrite",    OK, 72051, 8,       749_000),
    ("getc",       OK, 2947, 99,       4939),
    ("get_block",  OK, 235458, 14,     131_000),
    ("seeks",      OK, 9676.0, 125,    1748),
    ("seq_create", TF, None, None,     2205),
    ("seq_stat",   TF, None, None,     881),
    ("seq_del",    TF, None, None,     689),
    ("ran_create", TF, None, None,     668),
    ("ran_stat",   TF, None, None,     23),
    ("ran_del",    TF, None, None,     981),
])
# 29: format 1.98 written by 2.00a
EXPECTED[(PUB, 29)] = _run("ANDREW-PC", "1.98", "2.00a", 1, "1731168315", 64512, None, 8192, 5, _ft(16), [
    ("putc",       OK, 540, 99,        16366),
    ("put_block",  OK, 745124, 100,    5650),
    ("rewrite",    OK, 980550, 91,     12027),
    ("getc",       OK, 2205, 99,       4465),
    ("get_block",  OK, 1203968, 58,    1806),
    ("seeks",      TF, None, None,     478),
    ("seq_create", TF, None, None,     586),
    ("seq_stat",   TF, None, None,     404),
    ("seq_del",    TF, None, None,     3818),
    ("ran_create", TF, None, None,     3324),
    ("ran_stat",   TF, None, None,     837),
    ("ran_del",    TF, None, None,     3156),
])

# ---------------------------------------------------------------- seed-lines.csv
# 1: bonnie++ 1.03d
EXPECTED[(SEED, 1)] = _v103("v2c01", 8192, _ft(16), [
    ("putc",       OK, 81160, 92),
    ("put_block",  OK, 109588, 38),
    ("rewrite",    OK, 89987, 67),
    ("getc",       OK, 69763, 88),
    ("get_block",  OK, 113613, 36),
    ("seeks",      OK, 2635.7, 67),
    ("seq_create", OK, 687, 10),
    ("seq_stat",   TF, None, None),
    ("seq_del",    OK, 1517, 9),
    ("ran_create", OK, 647, 10),
    ("ran_stat",   TF, None, None),
    ("ran_del",    OK, 1569, 8),
])
# 2: CSV format 1.93c written by bonnie++ 1.94, -f, I/O chunk 1m
EXPECTED[(SEED, 2)] = _run("jr4s", "1.93c", "1.94", 1, "1247278563", 98304, 1048576, None, None, _ft(16), [
    ("putc",       NR, None, None,     None),
    ("put_block",  OK, 102805, 9,      4_081_000),
    ("rewrite",    OK, 249906, 29,     1_499_000),
    ("getc",       NR, None, None,     None),
    ("get_block",  OK, 599950, 36,     1_339_000),
    ("seeks",      OK, 157.0, 52,      3_289_000),
    ("seq_create", OK, 11262, 48,      41559),
    ("seq_stat",   TF, None, None,     1358),
    ("seq_del",    OK, 25964, 88,      1469),
    ("ran_create", OK, 12145, 39,      21744),
    ("ran_stat",   TF, None, None,     10),
    ("ran_del",    OK, 5352, 31,       39535),
])
