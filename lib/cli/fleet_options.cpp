#include "cli/fleet_options.hpp"

namespace tp {

void add_nats_options(CLI::App& app, NatsSettings& settings) {
  app.add_option("-s,--server", settings.servers, "NATS server URLs, comma-separated")
      ->default_val(settings.servers)
      ->type_name("URLS");
  app.add_option("--creds", settings.creds,
                 "Credentials file: a NATS .creds file, or one line user:password or a token")
      ->type_name("FILE");
  app.add_option("--tls-ca", settings.tls_ca, "CA certificates of the server's (turns TLS on)")->type_name("FILE");
  app.add_option("--tls-cert", settings.tls_cert, "Client certificate chain (with --tls-key)")->type_name("FILE");
  app.add_option("--tls-key", settings.tls_key, "Client private key")->type_name("FILE");
  app.add_option("--domain", settings.domain, "JetStream domain (a leaf node's)");
  app.add_flag("--only-given-servers", settings.only_given_servers,
               "Connect only to the servers given, not to those a cluster advertises");
}

}  // namespace tp

namespace tp {

void add_clickhouse_options(CLI::App& app, ClickHouseSettings& settings, std::string& table) {
  app.add_option("--clickhouse", settings.url, "ClickHouse's HTTP interface")
      ->default_val(settings.url)
      ->type_name("URL");
  app.add_option("--clickhouse-creds", settings.creds, "File whose first line is user:password for ClickHouse")
      ->type_name("FILE");
  app.add_option("--database", settings.database, "ClickHouse database")->default_val(settings.database);
  app.add_option("--table", table, "ClickHouse table")->default_val(table);
  app.add_option("--clickhouse-timeout", settings.timeout_ms,
                 "Milliseconds ClickHouse may stay silent (to connect, to answer, between pieces of an answer) "
                 "before the tool gives up (exit 8)")
      ->default_val(settings.timeout_ms)
      ->type_name("MS");
}

}  // namespace tp
