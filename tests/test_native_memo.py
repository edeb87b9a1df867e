"""What the cache keeps of the native audit: the audit as plain data and back, anything else refused."""

from __future__ import annotations

import marshal

import pytest

from wheeldoctor.engine.native_memo import from_data, to_data
from wheeldoctor.judge.native_audit import NativeAudit, NativeFinding, Source
from wheeldoctor.model.findings import Code, Finding, Kind

pytestmark = pytest.mark.unit

AUDIT = NativeAudit(
    findings=(
        NativeFinding(
            subject="wdnixl",
            version="1.0",
            site_dir="/site",
            finding=Finding(
                code=Code.LIBRARY_UNRESOLVED,
                kind=Kind.UNLOADABLE,
                path="wdnixl/_ep.so",
                message="needs libcudart.so.12: found nowhere",
                expected="libcudart.so.12",
            ),
        ),
        NativeFinding(
            subject="libcudart",
            version=None,
            site_dir=None,
            finding=Finding(code=Code.CUDA_MAJORS_MIXED, kind=Kind.MIXED, path=None, message="majors 12 and 13"),
        ),
    ),
    sources=(Source(provider="system", library="libc.so.6", path="/lib/libc.so.6", owner=None, needed_by=3),),
    machine="x86_64",
    ld_so_cache="/etc/ld.so.cache",
    interpreter_rpath=("/opt/python/lib",),
    objects=3,
    extension_modules=1,
    loaded_on_import=2,
    strict=True,
)


def test_an_audit_comes_back_as_it_was_kept() -> None:
    data = to_data(AUDIT)
    assert from_data(marshal.loads(marshal.dumps(data))) == AUDIT


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: None,
        lambda d: d[:3],
        lambda d: ((*d[0][:1], (*d[0][1][:3], "WD999", *d[0][1][4:])), *d[1:]),  # a code this code does not know
        lambda d: ((("x",) * 7,), *d[1:]),  # a row of another length
        lambda d: (d[0], ((*d[1][0][:4], "3"),), *d[2:]),  # a count that is text
        lambda d: (*d[:3], (*d[3][:4], 1)),  # a flag that is a number
        lambda d: (*d[:2], (*d[2][:3], ["/opt/python/lib"]), d[3]),  # a list where a tuple was kept
    ],
)
def test_anything_of_another_shape_is_refused(damage: object) -> None:
    assert from_data(damage(to_data(AUDIT))) is None  # type: ignore[operator]
