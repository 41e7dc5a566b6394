"""The issue's examples, each through HTTP on the stack as an agent sends them (one turn per request, the
sessions in order), checked from the outside only: the memories list, the profile, the alerts, a new
session's context and recall. The checks are the blind probe's (``tests/bench/probe_blind.py`` defines
each one); every case runs for a fresh tenant's user.

The cases the service does not yet pass are expected failures, strictly: each turns into a failure of the
suite the day it passes, so its mark must go then (issue 34: the learned reader does not yet read them).
"""

import pytest

from tests.bench.probe_blind import Api, Conversation, UserView, evaluate

CASES = [
    Conversation(
        id="porto_day_trip",
        lang="en",
        topic="request",
        sessions=[["I've lived in Porto for three years now, what's a good day trip from here?"]],
        checks=[
            {"profile_has": {"slot": "basic.residence", "contains": "Porto"}},
            {"not_stored": "day trip"},
        ],
    ),
    Conversation(
        id="hangzhou_rider",
        lang="zh",
        topic="request",
        sessions=[["我在杭州做外卖骑手，这边夏天太热了，有什么防晒的好办法吗？"]],
        checks=[{"kept": "杭州"}, {"kept": "外卖骑手"}],
    ),
    Conversation(
        id="dental_hygienist_rant",
        lang="en",
        topic="rant",
        sessions=[
            [
                "ugh the printer jammed again and IT took forever, honestly as a dental hygienist "
                "I do not have time for this, can you draft an email to IT?"
            ]
        ],
        checks=[{"profile_has": {"slot": "basic.occupation", "contains": "dental hygienist"}}],
    ),
    Conversation(
        id="name_and_order",
        lang="en",
        topic="instruction",
        sessions=[["I'm Oluwaseun by the way, and from now on always answer me in French."]],
        checks=[
            {"profile_has": {"slot": "basic.name", "contains": "Oluwaseun"}},
            {"not_stored": "always answer me in French"},
        ],
    ),
    Conversation(
        id="kiwi_restated",
        lang="en",
        topic="restatement",
        sessions=[
            ["kiwi makes my mouth swell up, so none of that for me"],
            ["just so you know, I'm allergic to kiwi fruit"],
        ],
        checks=[
            {"one_memory": {"slot": "basic.allergy", "contains": "kiwi", "confirmed_sessions_at_least": 2}}
        ],
    ),
    Conversation(
        id="paramedic_left",
        lang="en",
        topic="change",
        sessions=[
            ["I work as a paramedic"],
            ["I left the ambulance service last month, now I teach first-aid courses"],
        ],
        checks=[{"not_current": {"slot": "basic.occupation", "contains": "paramedic"}}],
    ),
    Conversation(
        id="name_misspelled",
        lang="zh",
        topic="change",
        sessions=[["我叫王晓雯"], ["不好意思上次打错了，是王小雯，大小的小"]],
        checks=[{"current": {"slot": "basic.name", "contains": "王小雯"}}],
    ),
    Conversation(
        id="frozen_xiamen_moved",
        lang="zh",
        topic="frozen_change",
        sessions=[["我住在厦门"], ["我家在厦门"], ["我上周搬到福州了，厦门的房子已经退了"]],
        checks=[
            {
                "any_of": [
                    {"alert": {"contains": "福州"}},
                    {"current": {"slot": "basic.residence", "contains": "福州"}},
                ]
            }
        ],
    ),
    Conversation(
        id="diabetes_retracted",
        lang="zh",
        topic="vital_retraction",
        sessions=[["我有糖尿病，甜的不能多吃"], ["医生说我血糖已经正常了，不算糖尿病了"]],
        checks=[{"alert": {}}],
    ),
    Conversation(
        id="iban_with_fact",
        lang="en",
        topic="secret",
        sessions=[
            ["my account for the refund is DE89370400440532013000, I'm a physiotherapist if that matters"]
        ],
        checks=[{"not_stored": "DE89370400440532013000"}, {"kept": "physiotherapist"}],
    ),
]


#: read wrong today: no occupation read in the rant, a name correction with an apology read with no
#: change flag, the diabetes clause read as health "血糖" with no retraction flag (docs/quality.md, §13)
NOT_YET = frozenset({"dental_hygienist_rant", "name_misspelled", "diabetes_retracted"})


def _marked(case: Conversation) -> object:
    marks = [pytest.mark.xfail(strict=True, reason="issue 34: not read yet")] if case.id in NOT_YET else []
    return pytest.param(case, id=case.id, marks=marks)


@pytest.mark.slow
@pytest.mark.parametrize("case", [_marked(case) for case in CASES])
def test_an_issue_example_is_remembered_as_promised(http, tenant_key, case: Conversation) -> None:
    api = Api(http, tenant_key)
    user = f"u_{case.id}"
    api.play(user, case)
    view = UserView(api, user, case)
    failed = [(check, detail) for check in case.checks for ok, detail in [evaluate(view, check)] if not ok]
    assert not failed, "\n".join(f"{check}: seen {detail}" for check, detail in failed)
