"""Real hosts (issue 30): the hosts of an inventory reached over SSH.

What is here so far (docs/real-hosts.md comes with ``run --hosts``):

* :mod:`.inventory`: the hosts file (TOML, validated like scenarios):
  name, SSH address, user, key, port or an ``ssh_config`` host, roles;
* :mod:`.ssh`: commands and files over OpenSSH (one multiplexed
  connection per host), or on this machine for a host ``address = "local"``;
* :mod:`.preflight`: what every host must have before anything runs, each
  failure one line naming the host and the fix
  (``synctcp-testbed hosts check HOSTS.toml``);
* :mod:`.clocks`: the bound on the error of a one-way delay between two
  hosts, from their ``chronyc -c tracking``;
* :mod:`.lab`: namespace hosts on one machine, each with its own sshd on a
  management network, for the tests and for trying it without two machines.

The one-way figures with that bound are
:mod:`synctcp_testbed.analysis.oneway`.
"""
