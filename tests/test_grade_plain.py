"""What a runner hands its worker is read as plain data (helpers/grade/wire.py): the answers the checks take
come back equal, and anything else is one Unreadable line or an Opaque no check accepts, never an object."""

from __future__ import annotations

import decimal
import fractions
import json
import math

import numpy as np
import pytest
import torch

from helpers.grade import wire as plain


def _through(value):
    return plain.decode(json.loads(json.dumps(plain.encode(value))))


def test_the_answers_the_checks_take_come_back_equal():
    g = torch.Generator().manual_seed(0)
    tensors = [torch.randn(3, 5, 4, generator=g), torch.randn(2, 3, generator=g).double(), torch.arange(6).reshape(2, 3),
               torch.tensor([True, False]), torch.randn(4, generator=g).half(), torch.randn(4, generator=g).bfloat16(),
               torch.zeros(0, 3), torch.tensor(2.5)]
    for t in tensors:
        back = _through(t)
        assert back.dtype == t.dtype and back.shape == t.shape and torch.equal(back, t)
    assert _through((80, [0.5, None], {"a": 1, 2: "b"})) == (80, [0.5, None], {"a": 1, 2: "b"})
    assert math.isnan(_through(float("nan"))) and _through(float("-inf")) == float("-inf")
    assert _through(np.int64(7)) == 7 and type(_through(np.float32(0.5))) is float
    # a prediction written Fraction(4, 5) was ✓ in the notebook and not confirmed by the grader (sweep 22, B2)
    assert _through(fractions.Fraction(4, 5)) == 0.8 and _through(decimal.Decimal("0.75")) == 0.75
    for array in (np.array(0.78), np.array(3, dtype=np.int64), np.arange(6.0).reshape(2, 3).T):  # 0-dim stays 0-dim
        back = _through(array)  # (np.array(0.78) came back [0.78]: a right prediction "not confirmed", sweep 16)
        assert back.shape == array.shape and back.dtype == array.dtype and np.array_equal(back, array)
    assert np.array_equal(_through(np.arange(6.0).reshape(2, 3)), np.arange(6.0).reshape(2, 3))


def test_an_object_comes_back_as_opaque():
    back = _through([object(), lambda x: x])
    assert all(isinstance(b, plain.Opaque) for b in back)


@pytest.mark.parametrize("data", [
    {"pickle": "gASV"},  # an unknown tag
    {"tensor": "float32", "shape": [2, 2], "data": "AAAA"},  # 3 bytes for 16
    {"tensor": "object", "shape": [1], "data": ""},  # no such dtype
    {"tensor": "float32", "shape": [-1], "data": ""},
    {"dict": [[{"list": []}, 1]]},  # a key that is not a plain value
    {"list": [1], "tuple": [2]},  # two tags in one
    [1, 2],  # a bare JSON list: every container is tagged
])
def test_data_of_another_shape_is_one_unreadable_line(data):
    with pytest.raises(plain.Unreadable) as err:
        plain.decode(data)
    assert "\n" not in str(err.value)


def test_too_deep_or_too_many_numbers_is_unreadable():
    deep = 1
    for _ in range(plain.MAX_DEPTH + 5):
        deep = {"list": [deep]}
    with pytest.raises(plain.Unreadable):
        plain.decode(deep)
    big = plain.encode(torch.zeros(1000, 1000))
    with pytest.raises(plain.Unreadable):
        plain.decode(big, limit=999_999)
    assert plain.decode(big).shape == (1000, 1000)
