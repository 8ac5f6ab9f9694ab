"""The pytest plugin, run on small generated test suites (pytester)."""

COUNTER_FILE = '''
class Counter:
    def deploy(self, start=0):
        self.storage["n"] = start

    def bump(self, by=1):
        n = self.storage["n"] + by
        self.storage["n"] = n
        return n

    def boom(self):
        raise ValueError("boom from the actor")
'''


def test_chain_fixture_isolates_every_test(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.parametrize("round", range(3))
        def test_mutates(chain, accounts, round):
            assert chain.height == 0
            assert chain.nonce(accounts[0]) == 0
            chain.transfer(accounts[1], 10**18, sender=accounts[0])
            chain.mine(4)
            chain.interval = 7
            assert chain.height == 5

        def test_sees_genesis(chain, accounts):
            assert chain.height == 0
            assert chain.interval == 1
            assert chain.balance(accounts[1]) == 10**24
            assert chain.events() == []
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=4)


def test_deploy_fixture_finds_actors_and_accepts_source(pytester):
    pytester.mkdir("actors")
    (pytester.path / "actors" / "counter.py").write_text(COUNTER_FILE)
    pytester.makepyfile(
        """
        def test_by_path(chain, deploy):
            actor = deploy("counter.py", 5)
            assert actor.name == "Counter"
            assert chain.call(actor, "bump", 2).return_value == 7

        def test_by_source(chain, deploy):
            actor = deploy("class Tiny:\\n    def hi(self):\\n        return 'hi'\\n")
            assert chain.call(actor, "hi").return_value == "hi"

        def test_missing_path(deploy):
            import pytest
            with pytest.raises(FileNotFoundError, match="nothere.py"):
                deploy("nothere.py")
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=3)


def test_gas_table_lists_every_handler(pytester):
    pytester.mkdir("actors")
    (pytester.path / "actors" / "counter.py").write_text(COUNTER_FILE)
    pytester.makepyfile(
        """
        def test_bumps(chain, deploy):
            actor = deploy("counter.py")
            for i in range(3):
                chain.call(actor, "bump", i).raise_for_status()
            assert not chain.call(actor, "boom").ok
        """
    )
    result = pytester.runpytest("--timerhost-gas")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*timerhost gas (cycles / cells per handler)*",
            "actor*handler*calls*failed*cycles min*cycles avg*cycles max*cells min*cells avg*cells max*",
            "Counter*boom*1*1*",
            "Counter*bump*3*0*",
            "Counter*deploy*1*0*",
        ]
    )
    # Without the option there is no table.
    plain = pytester.runpytest()
    assert "timerhost gas" not in plain.stdout.str()


BEEPER_FILE = '''
class Beeper:
    def deploy(self):
        pvm_host.schedule_timer(pvm_host.block_height() + 2, b"")

    def handle_timer(self, payload):
        pvm_host.emit("Beep", {})
'''


def test_gas_table_includes_timer_fires(pytester):
    pytester.mkdir("actors")
    (pytester.path / "actors" / "beeper.py").write_text(BEEPER_FILE)
    pytester.makepyfile(
        """
        def test_fires(chain, deploy):
            actor = deploy("beeper.py", value=10**18)
            chain.mine(2)
            assert len(chain.events(name="Beep")) == 1
        """
    )
    result = pytester.runpytest("--timerhost-gas")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["Beeper*handle_timer (timer)*1*0*"])


def test_failures_show_the_actor_traceback_not_rust(pytester):
    pytester.mkdir("actors")
    (pytester.path / "actors" / "counter.py").write_text(COUNTER_FILE)
    pytester.makepyfile(
        """
        def test_fails(chain, deploy):
            actor = deploy("counter.py")
            chain.call(actor, "boom").raise_for_status()
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "Reverted" in out
    assert "ValueError: boom from the actor" in out
    assert "actor traceback:" in out and "in boom" in out
    assert "cycles used:" in out
    assert "panicked" not in out and "PanicException" not in out
    # The package's own frames are hidden: the test line is what pytest shows.
    assert "timerhost/chain.py" not in out


def test_gas_table_names_a_failed_deployment_by_its_class(pytester):
    pytester.mkdir("actors")
    (pytester.path / "actors" / "beeper.py").write_text(BEEPER_FILE)
    pytester.makepyfile(
        """
        import pytest
        import timerhost

        def test_unfunded(chain, deploy):
            # Its deploy schedules a timer it cannot lend the deposit for.
            with pytest.raises(timerhost.DeployError):
                deploy("beeper.py", value=0)
        """
    )
    result = pytester.runpytest("--timerhost-gas")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["Beeper*deploy*1*1*"])
