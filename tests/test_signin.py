"""Password sign-in in the backend: sessions in SQLite, the failed-sign-in throttle, signing out."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from backend import assignment
from backend.accounts import auth, sessions, signin
from backend.errors import SettingsError
from backend.settings import load_settings


@pytest.fixture
def people(database):
    auth.add_user(database, "ann", "annotator", "password1")
    auth.add_user(database, "rev", "reviewer", "password2")
    return database


def audit_count(database, action: str, target: str | None = None) -> int:
    sql = "SELECT count(*) FROM audit_log WHERE action = ?" + (" AND target = ?" if target else "")
    return database.scalar(sql, (action, target) if target else (action,))


def test_a_session_outlives_the_process_and_ends_with_sign_out(people, settings):
    result = signin.sign_in(people, settings, "ann", "password1", "10.0.0.1")
    assert result.ok and result.token and result.username == "ann"
    # what a restarted server sees: a new Database object on the same file
    from backend.storage import Database

    reopened = Database(settings.db_path)
    assert sessions.user_for(reopened, result.token) == "ann"
    assert people.scalar("SELECT count(*) FROM sessions WHERE token_sha256 = ?", (result.token,)) == 0  # hashed
    assert signin.sign_out(reopened, result.token) == "ann"
    assert sessions.user_for(people, result.token) is None
    assert audit_count(people, "signin", "ann") == 1 and audit_count(people, "signout", "ann") == 1


def test_sessions_expire(people, settings):
    token = signin.sign_in(people, settings, "ann", "password1", "10.0.0.1").token
    with people.write() as db:
        db.conn.execute("UPDATE sessions SET expires_at = '2000-01-01T00:00:00+00:00'")
    assert sessions.user_for(people, token) is None
    short = settings.replace(session_hours=1.0)
    fresh = signin.sign_in(people, short, "ann", "password1", "10.0.0.1").token
    assert people.scalar("SELECT count(*) FROM sessions") == 1  # the expired row went when she signed in again
    expires = people.scalar("SELECT expires_at FROM sessions")
    created = people.scalar("SELECT created_at FROM sessions")
    assert expires[:13] > created[:13]  # one hour later
    assert sessions.user_for(people, fresh) == "ann"


def test_disabling_an_account_ends_its_sessions_at_once_for_good(people, settings):
    token = signin.sign_in(people, settings, "ann", "password1", "10.0.0.1").token
    auth.set_disabled(people, "ann", True, actor="boss")
    assert sessions.user_for(people, token) is None
    auth.set_disabled(people, "ann", False, actor="boss")
    assert sessions.user_for(people, token) is None  # enabling again does not revive the old session
    # a disabled account is told so only with the right password
    auth.set_disabled(people, "ann", True, actor="boss")
    told = signin.sign_in(people, settings, "ann", "password1", "10.0.0.1")
    assert told.status == 403 and "disabled" in told.message and told.token is None
    wrong = signin.sign_in(people, settings, "ann", "not her password", "10.0.0.1")
    assert wrong.status == 401 and wrong.message == signin.WRONG


def test_a_wrong_password_and_an_unknown_name_read_the_same(people, settings):
    unknown = signin.sign_in(people, settings, "nobody", "password1", "10.0.0.1")
    wrong = signin.sign_in(people, settings, "ann", "password2", "10.0.0.1")
    assert (unknown.status, unknown.message) == (wrong.status, wrong.message) == (401, signin.WRONG)
    details = [row["detail"] for row in people.query("SELECT detail FROM audit_log WHERE action = 'signin.failed'")]
    assert '"unknown user"' in details[0] and '"wrong password"' in details[1]


def test_fifty_wrong_passwords_in_a_row_are_mostly_refused_unchecked(people, settings):
    outcomes = [signin.sign_in(people, settings, "ann", f"guess {n}", "10.0.0.1").status for n in range(50)]
    free = settings.signin_lock_after // 2
    assert outcomes[:free] == [401] * free  # checked (and wrong)
    assert outcomes.count(401) < 50 and outcomes.count(401) <= settings.signin_lock_after
    assert outcomes.count(429) == 50 - outcomes.count(401)
    state = signin.throttle_state(people, settings, "account:ann")
    assert state["wait_seconds"] > 0 and state["refused"] == outcomes.count(429)
    assert audit_count(people, "signin.failed", "ann") == outcomes.count(401)
    refused = signin.sign_in(people, settings, "ann", "password1", "10.0.0.1")  # even the right one, for now
    assert refused.status == 429 and "wait" in refused.message and refused.retry_after > 0


def test_parallel_guesses_cannot_slip_past_the_throttle(people, settings):
    started = time.monotonic()
    with ThreadPoolExecutor(8) as pool:
        outcomes = list(
            pool.map(lambda n: signin.sign_in(people, settings, "ann", f"guess {n}", "10.0.0.2").status, range(40))
        )
    elapsed = time.monotonic() - started
    free = settings.signin_lock_after // 2
    checked = outcomes.count(401)
    # each checked attempt was charged before the next was admitted: the free ones, then one more only after
    # each wait of 1, 2, 4 ... s had passed (a loaded machine may take that long for the 40 guesses)
    assert free <= checked and 2 ** (checked - free) - 1 <= elapsed, (checked, elapsed)
    assert signin.throttle_state(people, settings, "account:ann")["failures"] == checked
    assert outcomes.count(429) == 40 - checked


def test_a_lock_then_the_right_password_works_again(people, settings):
    quick = settings.replace(signin_lock_after=4, signin_lock_minutes=0.04)  # a 2.4-second lock
    checked = 0
    for n in range(50):  # a patient guesser: honours every wait the server names, until the lock
        result = signin.sign_in(people, quick, "ann", f"guess {n}", "10.0.0.3")
        checked += result.status == 401
        if signin.throttle_state(people, quick, "account:ann")["locked"]:
            break
        if result.retry_after:
            time.sleep(result.retry_after)
    assert checked == 4 and signin.throttle_state(people, quick, "account:ann")["locked"]
    assert audit_count(people, "signin.locked", "account:ann") == 1
    locked = signin.sign_in(people, quick, "ann", "password1", "10.0.0.3")
    assert locked.status == 429 and "locked" in locked.message
    time.sleep(locked.retry_after)
    assert signin.sign_in(people, quick, "ann", "password1", "10.0.0.3").ok
    assert signin.throttle_state(people, quick, "account:ann")["failures"] == 0


def test_guesses_across_accounts_are_throttled_per_address(people, settings):
    spray = settings.replace(signin_address_lock_after=6)
    outcomes = [signin.sign_in(people, spray, f"user{n}", "password1", "10.0.0.4") for n in range(10)]
    assert [o.status for o in outcomes[:3]] == [401, 401, 401]
    assert all(o.status == 429 and "network address" in o.message for o in outcomes[3:])
    # another address is not affected, and a right password from it still works
    assert signin.sign_in(people, spray, "rev", "password2", "10.0.0.5").ok


def test_a_right_password_clears_the_account_but_not_the_address(people, settings):
    for n in range(3):
        signin.sign_in(people, settings, "ann", f"guess {n}", "10.0.0.6")
    assert signin.sign_in(people, settings, "ann", "password1", "10.0.0.6").ok
    assert signin.throttle_state(people, settings, "account:ann")["failures"] == 0
    assert signin.throttle_state(people, settings, "address:10.0.0.6")["failures"] == 3


def test_signing_out_frees_every_lease_at_once(people, settings):
    with people.write() as db:
        assignment.add_tasks(db, "intent", ["S1"], 1)
        lease = assignment.next_task(db, "intent", "ann", 20)
    assert lease is not None
    token = signin.sign_in(people, settings, "ann", "password1", "10.0.0.7").token
    assert signin.sign_out(people, token) == "ann"
    with people.write() as db:  # the only slot is free for someone else now
        assert assignment.next_task(db, "intent", "rev", 20).item_id == "S1"
    assert signin.sign_out(people, token) is None  # a second sign-out changes nothing


def test_signin_settings_are_checked():
    with pytest.raises(SettingsError):
        load_settings({"COMPSTUDIO_SIGNIN_LOCK_AFTER": "1"})
    with pytest.raises(SettingsError):
        load_settings({"COMPSTUDIO_SESSION_HOURS": "0"})
    assert load_settings({"COMPSTUDIO_SIGNIN_LOCK_MINUTES": "0.5"}).signin_lock_minutes == 0.5
