# tests/cli/pg_subscribe_owner.sh -- the owner of a subscribed PostgreSQL
# table cannot run code as the subscriber.
#
# The owner (role sqlq_owner, tests/servers/postgres.sh) makes an enum type
# of its own with a cast to json, a table whose key is of that type, and
# lets the subscriber (role sqlq, which owns sqlq's tables) subscribe to it
# with row images.  to_json() and row_to_json(), which the trigger calls on
# the row, call a type's cast to json, and the cast's function notes the
# role it runs as and tries to grant the owner the right to read sqlq's
# jobs.  A trigger function that ran as the subscriber (SECURITY DEFINER)
# ran the owner's function as the subscriber, and the grant went through.
# The trigger runs as the role that writes the table: the owner's code runs
# as the owner, who gains nothing.  The writer needs INSERT on sqlq_jobs and
# SELECT on sqlq_subscriptions (docs/postgres.md, "Rights").
#
# Runs on a database of its own (pg_database.bash); needs psql.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_database.bash"

# psql_as ROLE [PSQL ARGS...]: psql on the test database as ROLE.
psql_as() {
  local role=$1
  shift
  psql -X -q -At -v ON_ERROR_STOP=1 "${url/:\/\/sqlq@/://$role@}" "$@"
}

run "init" 0 sq init
run "the owner may make its table, and write the jobs of its events" 0 psql_as sqlq <<'SQL'
GRANT CREATE ON SCHEMA public TO sqlq_owner;
GRANT INSERT ON sqlq_jobs TO sqlq_owner;
GRANT SELECT ON sqlq_subscriptions TO sqlq_owner;
SQL
run "the owner's type, cast and table" 0 psql_as sqlq_owner <<'SQL'
CREATE TABLE ran_as (who text);
GRANT INSERT ON ran_as TO PUBLIC;
CREATE TYPE mood AS ENUM ('calm');
CREATE FUNCTION mood_json(m mood) RETURNS json LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.ran_as VALUES (current_user);
  BEGIN
    GRANT SELECT ON public.sqlq_jobs TO sqlq_owner;
  EXCEPTION WHEN insufficient_privilege THEN
  END;
  RETURN to_json(m::text);
END$$;
CREATE CAST (mood AS json) WITH FUNCTION mood_json(mood);
CREATE TABLE moods (m mood PRIMARY KEY, note text);
GRANT TRIGGER ON moods TO sqlq;
SQL
run "subscribe to the owner's table" 0 sq subscribe moods --on insert --tag moods --rows
run "the owner writes its table" 0 psql_as sqlq_owner -c "INSERT INTO moods VALUES ('calm', 'n')"
run "the event" 0 sq jobs --json moods
expect_out_has "the event names the row" '\"pk\":{\"m\":\"calm\"}'
expect_out_has "the event has the row" '\"new\":{\"m\":\"calm\",\"note\":\"n\"}'
expect_eq "the owner's code ran as the owner only" \
  "$(psql_as sqlq_owner -c "SELECT string_agg(DISTINCT who, ',') FROM ran_as")" sqlq_owner
expect_eq "the owner may not read sqlq's jobs" \
  "$(psql_as sqlq_owner -c "SELECT has_table_privilege('public.sqlq_jobs', 'SELECT')")" f
run "unsubscribe" 0 sq unsubscribe moods --tag moods

finish
