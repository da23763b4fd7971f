"""Every number a loader reads is the double nearest to its text, whatever library versions are installed.

The texts below are ones pandas' default CSV parser (before pandas 3.1) reads one unit in the last place
off: 47.351351351351354 is in CloudSimPy's jobs.csv and changed Tetris's choices on its chunk 3; the
others were found by comparing pandas 2.0's reading of random decimal texts with Python's ``float``,
which is correctly rounded.
"""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import write
from traces import load_alibaba_v2017, load_alibaba_v2018, load_cloudsimpy
from traces.openb import load_openb
from traces.rawcsv import exact_floats
from traces.swf import load_swf

OFF_BY_ONE_IN_PANDAS = ["47.351351351351354", "0.9235245167087333", "29778.753011186276", "0.58102265572404089",
                        "26447.447375973529", "7768.0075310512713", "4534.e-29", "2260787806146.7186e-14"]


def test_the_texts_pandas_misread_are_read_exactly():
    assert exact_floats(OFF_BY_ONE_IN_PANDAS).tolist() == [float(text) for text in OFF_BY_ONE_IN_PANDAS]
    assert exact_floats(["47.351351351351354"])[0].hex() == "0x1.7acf914c1bad0p+5"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.text("0123456789", min_size=1, max_size=20), st.integers(0, 20),
                          st.one_of(st.none(), st.integers(-330, 310)), st.sampled_from(["", "-", "+"])),
                min_size=1, max_size=50))
def test_any_decimal_text_reads_as_python_float_reads_it(parts):
    texts = []
    for digits, point, exponent, sign in parts:
        point = min(point, len(digits))
        texts.append(f"{sign}{digits[:point]}.{digits[point:]}" + ("" if exponent is None else f"e{exponent}"))
    assert [v.hex() for v in exact_floats(texts).tolist()] == [float(t).hex() for t in texts]


@pytest.mark.parametrize("text, expected", [
    ("", math.nan), ("  2.5 ", 2.5), ("ten", math.nan), ("1_000", math.nan), ("0x10", math.nan), ("1,5", math.nan),
    ("inf", math.inf), ("-Infinity", -math.inf), ("NaN", math.nan), ("1e999", math.inf), ("+.5", 0.5), ("5.", 5.0),
])
def test_what_is_a_number_and_what_is_not(text, expected):
    value = exact_floats([text])[0]
    assert (math.isnan(value) and math.isnan(expected)) or value == expected


@pytest.mark.parametrize("text", OFF_BY_ONE_IN_PANDAS[:4])
def test_every_loader_reads_the_nearest_double(tmp_path, text):
    value = float(text)
    cloudsimpy = load_cloudsimpy(write(tmp_path, "jobs.csv", ",submit_time,duration,cpu,memory,job_id,task_id,"
                                       f"instances_num,disk\n0,0,{text},0.5,{text},1,1,1,0\n"))
    task = cloudsimpy[0].tasks[0]
    assert (task.duration, task.demand["memory"]) == (value, value)

    v2017 = load_alibaba_v2017(write(tmp_path, "v2017.csv", f"10,40,1,1,2,Terminated,50,{text}\n"),
                               cache=tmp_path / "cache")
    assert v2017.jobs[0].tasks[0].demand["memory"] == value

    v2018 = load_alibaba_v2018(write(tmp_path, "v2018.csv", f"M1,2.0,j_1,1,Terminated,100,110,100.0,{text}\n"),
                               cache=tmp_path / "cache")
    assert v2018.jobs[0].tasks[0].demand["memory"] == value / 100  # v2018's memory is in percent

    fields = ["1", text, "0", text, "4", "-1", "-1", "4", text, "-1", "1", "1", "1", "1", "1", "1", "-1", "-1"]
    swf = load_swf(write(tmp_path, "log.swf", "; MaxNodes: 8\n" + " ".join(fields) + "\n"))
    job = swf.jobs[0]
    assert (job.submit_time, job.tasks[0].duration, job.tasks[0].estimate) == (value, value, value)

    pods = load_openb(write(tmp_path, "pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
                            f"creation_time,deletion_time,scheduled_time\np,1000,100,1,500,,LS,Running,{text},"
                            f"1e6,{text}\n"))
    assert pods.jobs[0].submit_time == value and pods.jobs[0].tasks[0].duration == 1e6 - value


def test_a_text_that_is_no_number_is_refused_or_counted_as_before(tmp_path):
    with pytest.raises(ValueError, match=r"log.swf: line 2: field 4 \(run_time\) is '1_0', not a number"):
        load_swf(write(tmp_path, "log.swf", "; MaxNodes: 8\n1 0 0 1_0 4 -1 -1 4 10 -1 1 1 1 1 1 1 -1 -1\n"))
    pods = load_openb(write(tmp_path, "pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
                            "a,1000,100,0,0\nb,lots,100,0,0\nc,-5,100,0,0\n"))
    assert len(pods.jobs) == 1 and pods.skipped == {"negative or non-whole resources": 2}
