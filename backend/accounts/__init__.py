"""Accounts: users, roles and passwords (:mod:`.auth`, with ``require_role``, the one role check), Sign in
with Hugging Face (:mod:`.oauth`), the admin's account actions (:mod:`.admin`), demo accounts (:mod:`.demo`)
and ``python -m backend users`` (:mod:`.cli`)."""
